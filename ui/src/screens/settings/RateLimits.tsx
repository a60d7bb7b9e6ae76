// Settings → Cost and limits → Rate limits: what each provider's latest response said is
// left of its requests and tokens, and when the window resets (counted down each second),
// from the `settings` reply and each `rate_limits` event after it. Nothing shows before a
// provider has stated any (Ollama and local models never do).

import { useEffect, useState } from "react";
import { useEvents } from "../../app/context";
import type { RateLimitInfo } from "../../protocol";
import { rateLimitLow, rateLimitText, withLimits } from "../../lib/limits";

export function RateLimits({ initial }: { initial: RateLimitInfo[] }) {
  const [limits, setLimits] = useState(initial);
  useEffect(() => setLimits((l) => initial.reduce(withLimits, l)), [initial]);
  useEvents((_sid, e) => {
    if (e.type === "rate_limits") setLimits((l) => withLimits(l, e.limits));
  });
  const now = useNow(limits.some((r) => [r.requests?.resets_at, r.tokens?.resets_at].some((at) => at != null && at > Date.now())));
  if (limits.length === 0) return null;
  return (
    <div className="rate-limits small" data-testid="rate-limits">
      <h3>Rate limits</h3>
      <ul>
        {limits.map((r) => (
          <li key={r.provider} data-testid="rate-limit" data-provider={r.provider} className={rateLimitLow(r) ? "low" : undefined}>
            <code>{r.provider}</code>: {rateLimitText(r, now)}
          </li>
        ))}
      </ul>
      <div className="muted">As each provider's latest response stated them, since Skald started.</div>
    </div>
  );
}

/** The time now, again each second while `ticking`. */
function useNow(ticking: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!ticking) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [ticking]);
  return now;
}
