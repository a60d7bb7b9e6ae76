// What every Settings section is built from: its titled frame, and a command's loading,
// failure (with a retry) and value.

import type { ReactNode } from "react";
import type { ReplyOf } from "../../transport";
import type { Loadable } from "../../app/context";
import { ErrorState, Spinner } from "../../components/ui";

export function Section({ title, children, id }: { title: string; children: ReactNode; id: string }) {
  return (
    <section className="settings-section" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

export function Load<T>({ data, retry, children }: { data: Loadable<T>; retry: () => void; children: (v: T) => ReactNode }) {
  if (data.state === "loading") return <Spinner />;
  if (data.state === "error") return <ErrorState message={data.error} onRetry={retry} />;
  return <>{children(data.value)}</>;
}

/** The `settings` reply, read once for the sections that show it (Models, LaTeX). */
export type SettingsReply = ReplyOf<{ cmd: "settings" }>;
