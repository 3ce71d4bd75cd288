// ui-assets: where the explorer's files come from. From source: built on first use. The binary's build replaces this
// module with one that holds the files already built (scripts/build.ts), so the binary needs neither src/ui nor a bundler.
import { buildUiSources, bundleOf, type UiBundle } from "./ui-bundle.ts";

let bundle: Promise<UiBundle> | undefined;

/** uiBundle is the explorer's files, built once per process. */
export function uiBundle(): Promise<UiBundle> {
  bundle ??= buildUiSources().then(bundleOf);
  return bundle;
}
