//! Unit tests of `cron`.

use super::*;

fn ms(s: &str) -> i64 {
    DateTime::parse_from_rfc3339(s).unwrap().timestamp_millis()
}

#[test]
fn seconds_and_time_zones() {
    let every_10s = Schedule::parse("*/10 * * * * *", "UTC").unwrap();
    assert_eq!(
        every_10s.next_after(ms("2026-01-01T00:00:01Z")),
        Some(ms("2026-01-01T00:00:10Z"))
    );
    // 09:00 in Paris is 08:00 UTC in winter and 07:00 UTC in summer.
    let nine = Schedule::parse("0 9 * * *", "Europe/Paris").unwrap();
    assert_eq!(
        nine.next_after(ms("2026-01-15T00:00:00Z")),
        Some(ms("2026-01-15T08:00:00Z"))
    );
    assert_eq!(
        nine.next_after(ms("2026-07-15T00:00:00Z")),
        Some(ms("2026-07-15T07:00:00Z"))
    );
    assert!(matches!(
        Schedule::parse("61 * * * *", "UTC"),
        Err(CronError::Expression { .. })
    ));
    assert!(matches!(
        Schedule::parse("* * * * *", "Mars/Olympus"),
        Err(CronError::TimeZone(_))
    ));
    assert_eq!(
        format_time(ms("2026-01-15T08:00:00Z")),
        "2026-01-15T08:00:00Z"
    );
}

fn job(policy: MissedPolicy, next: i64) -> ScheduledJob {
    ScheduledJob {
        id: 1,
        name: "j".into(),
        description: String::new(),
        agent_id: "a".into(),
        prompt: "p".into(),
        cron: "0 * * * *".into(),
        timezone: "UTC".into(),
        missed_policy: policy,
        enabled: true,
        home_session_id: None,
        run_context_id: None,
        working_dir: None,
        worktree: false,
        next_run_at: Some(next),
        created_at: 0,
        updated_at: 0,
    }
}

#[test]
fn missed_runs_collapse_into_one() {
    // Hourly, down from 01:00 to 05:30: five occurrences missed, one run for all.
    let now = ms("2026-03-01T05:30:00Z");
    let (claim, run) = plan(&job(MissedPolicy::Once, ms("2026-03-01T01:00:00Z")), now).unwrap();
    assert!(run);
    assert_eq!(claim.occurrences, 5);
    assert_eq!(claim.scheduled_for, ms("2026-03-01T05:00:00Z"));
    assert_eq!(claim.new_next_run_at, Some(ms("2026-03-01T06:00:00Z")));
    // Skip drops them.
    let (claim, run) = plan(&job(MissedPolicy::Skip, ms("2026-03-01T01:00:00Z")), now).unwrap();
    assert!(!run);
    assert_eq!(claim.new_next_run_at, Some(ms("2026-03-01T06:00:00Z")));
    // On time, both run it.
    let on_time = ms("2026-03-01T05:00:01Z");
    let (claim, run) = plan(
        &job(MissedPolicy::Skip, ms("2026-03-01T05:00:00Z")),
        on_time,
    )
    .unwrap();
    assert!(run);
    assert_eq!(claim.occurrences, 1);
    // Every second, down for a day: counting stops at a bound, the latest is exact.
    let mut fast = job(MissedPolicy::Once, ms("2026-03-01T00:00:00Z"));
    fast.cron = "* * * * * *".into();
    let (claim, _) = plan(&fast, ms("2026-03-02T00:00:00Z")).unwrap();
    assert_eq!(claim.scheduled_for, ms("2026-03-02T00:00:00Z"));
    assert!(claim.occurrences > 10_000);
    assert_eq!(claim.new_next_run_at, Some(ms("2026-03-02T00:00:01Z")));
}
