// Help: the keyboard shortcuts and the query language at a glance.
import { Modal } from "./Modal.tsx";

const KEYS: [string, string][] = [
  ["/", "focus the query"],
  ["j / k", "next / previous entry"],
  ["Enter", "open the selected entry"],
  ["Esc", "close the entry, dialog or completion"],
  ["t", "live tail on / off"],
  ["?", "this help"],
];

const QUERY: [string, string][] = [
  ["level=error,warn", "any of the values (!= none of them)"],
  ['action~"login*"', "substring, or a glob with *"],
  ['timeout, "disk full"', "full text in action or message"],
  ["metadata.http.status>=500", "a field by its dotted path"],
  ["tag=checkout, actor.id!=null", "a tag; a field present"],
];

/** Help lists the shortcuts. */
export function Help({ onClose }: { onClose: () => void }) {
  return (
    <Modal title="Keyboard shortcuts" onClose={onClose}>
      <table class="keys">
        <tbody>
          {KEYS.map(([k, what]) => (
            <tr key={k}>
              <th scope="row">
                <kbd>{k}</kbd>
              </th>
              <td>{what}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Query language</h3>
      <table class="keys">
        <tbody>
          {QUERY.map(([k, what]) => (
            <tr key={k}>
              <th scope="row">
                <code>{k}</code>
              </th>
              <td>{what}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p>Click a value in the sidebar to include it, Alt-click to exclude it. Drag across the histogram to zoom.</p>
    </Modal>
  );
}
