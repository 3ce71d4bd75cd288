// Modal: a dialog over the page that takes the focus, keeps it and gives it back.
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

/** Modal shows children in a labelled dialog with a Close button; Esc closes it (keyboard.ts). */
export function Modal({ title, onClose, children }: { title: string; onClose: () => void; children: ComponentChildren }) {
  const closeButton = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    closeButton.current?.focus();
    return () => before?.focus();
  }, []);
  const id = `dlg-${title.replace(/\W+/g, "-").toLowerCase()}`;
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions lint/a11y/useKeyWithClickEvents: a click beside the dialog closes it; Esc does from the keyboard
    <div class="backdrop" onClick={(e) => e.target === e.currentTarget && onClose()}>
      <div class="modal" role="dialog" aria-modal="true" aria-labelledby={id}>
        <header>
          <h2 id={id}>{title}</h2>
          <button type="button" ref={closeButton} onClick={onClose}>
            Close
          </button>
        </header>
        <div class="modal-body">{children}</div>
      </div>
    </div>
  );
}
