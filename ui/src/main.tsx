import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { TransportContext } from "./app/context";
import { createTransport } from "./transport";
import { applyTheme, loadTheme } from "./lib/theme";
import "./styles.css";

// Before the first paint, so a dark-theme user never sees a white flash.
applyTheme(loadTheme());

void createTransport().then((transport) =>
  createRoot(document.getElementById("root")!).render(
    <StrictMode>
      <TransportContext.Provider value={transport}>
        <App />
      </TransportContext.Provider>
    </StrictMode>,
  ),
);
