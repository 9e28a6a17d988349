import "@picocss/pico/css/pico.min.css";
import "./styles.css";
import { render } from "preact";
import { App } from "./app.tsx";
import { loadConfig } from "./config.ts";

const root = document.getElementById("app");
if (root) {
  loadConfig().then(
    () => render(<App />, root),
    (error: unknown) => {
      root.innerHTML = "";
      const message = document.createElement("p");
      message.setAttribute("role", "alert");
      message.textContent = error instanceof Error ? error.message : String(error);
      root.append(message);
    },
  );
}
