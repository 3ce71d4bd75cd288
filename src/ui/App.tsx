// App: signed in or not. The session is an HttpOnly cookie the page cannot read: /info tells whether it is open.
import { useEffect, useState } from "preact/hooks";
import { call, type Info, whenSignedOut, WS } from "./api.ts";
import { Explorer } from "./Explorer.tsx";
import { SignIn } from "./SignIn.tsx";

/** App shows the sign-in until /info answers for the session, then the explorer. */
export function App() {
  const [info, setInfo] = useState<Info | null | undefined>(undefined);
  const check = () =>
    call<Info>("GET", `${WS}/info`).then(
      (r) => setInfo(r.data),
      () => setInfo(null),
    );
  useEffect(() => {
    whenSignedOut(() => setInfo(null));
    check();
  }, []);
  if (info === undefined) return <p class="loading">Loading…</p>;
  if (info === null) return <SignIn onSignedIn={check} />;
  return <Explorer info={info} onSignOut={() => setInfo(null)} />;
}
