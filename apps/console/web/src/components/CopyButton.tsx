import { useState } from 'react';

/** Copies `text` to the clipboard and says so; `label` names what is copied for screen readers. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState<boolean | undefined>();
  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
    } catch {
      // Clipboard access is refused on plain http outside localhost: the text stays selectable.
      setCopied(false);
    }
  }
  return (
    <span className="copy">
      <button type="button" onClick={() => void copy()}>{label}</button>
      <span role="status" className="muted">{copied === true ? 'Copied' : copied === false ? 'Copy failed: select the text instead' : ''}</span>
    </span>
  );
}
