// SignIn: the key is posted once to /ui/session and forgotten; the server answers with an HttpOnly session cookie.
import { useState } from "preact/hooks";
import { ApiFailure, call } from "./api.ts";

/** SignIn asks for an API key with logs:read. */
export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async (ev: Event) => {
    ev.preventDefault();
    const form = ev.currentTarget as HTMLFormElement;
    const input = form.elements.namedItem("key") as HTMLInputElement;
    setBusy(true);
    setError("");
    try {
      await call("POST", "/ui/session", { key: input.value });
      input.value = ""; // nothing of the key stays in the page
      onSignedIn();
    } catch (e) {
      setError(e instanceof ApiFailure ? e.message : "the server could not be reached");
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <form onSubmit={submit} aria-labelledby="signin-title">
        <h1 id="signin-title">Sluice</h1>
        <p>Sign in with an API key that can read logs (logs:read).</p>
        <label for="key">API key</label>
        <input id="key" name="key" type="password" autocomplete="off" spellcheck={false} required placeholder="sl_production_ro_…" />
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        <p class="hint">The key is sent once; the browser keeps only a session cookie that scripts cannot read.</p>
      </form>
    </main>
  );
}
