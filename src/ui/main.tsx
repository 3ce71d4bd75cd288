// main: the web explorer's entry point (contract §12), bundled by src/http/ui-bundle.ts.
import { render } from "preact";
import "uplot/dist/uPlot.min.css";
import "./style.css";
import { App } from "./App.tsx";

render(<App />, document.getElementById("app")!);
