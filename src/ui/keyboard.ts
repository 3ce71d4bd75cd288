// keyboard: the explorer's shortcuts (contract §12): `/` query, `j`/`k` move, Enter open, Esc close, `t` tail, `?` help.
import { useEffect, useRef } from "preact/hooks";

/** Keys are what each shortcut does. */
export interface Keys {
  focusQuery(): void;
  move(delta: number): void;
  open(): void;
  escape(): void;
  tail(): void;
  help(): void;
}

const typing = (t: EventTarget | null) => t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));

/** useKeyboard listens on the document; while a field has the focus only Esc is a shortcut. */
export function useKeyboard(keys: Keys): void {
  const current = useRef(keys);
  current.current = keys;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const k = current.current;
      if (e.key === "Escape") {
        k.escape();
        return;
      }
      if (typing(e.target) || e.ctrlKey || e.metaKey || e.altKey) return;
      // Enter on a focused button or link is that control's own
      if (e.key === "Enter" && e.target instanceof HTMLElement && /^(BUTTON|A)$/.test(e.target.tagName)) return;
      const act: Record<string, () => void> = {
        "/": k.focusQuery,
        j: () => k.move(1),
        k: () => k.move(-1),
        Enter: k.open,
        t: k.tail,
        "?": k.help,
      };
      const f = act[e.key];
      if (f) {
        e.preventDefault();
        f();
      }
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);
}
