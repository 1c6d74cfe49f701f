import "./panel.css";
import { render } from "preact";

function App() {
  return <main>Inbox</main>;
}

render(<App />, document.getElementById("app")!);
