//! Unit tests of `cron`.

use super::*;

fn job(store: &Store, next: i64) -> ScheduledJob {
    store
        .create_job(&NewJob {
            name: "digest".into(),
            description: String::new(),
            agent_id: "researcher".into(),
            prompt: "summarise".into(),
            cron: "0 * * * * *".into(),
            timezone: "UTC".into(),
            missed_policy: MissedPolicy::Once,
            home_session_id: None,
            run_context_id: None,
            working_dir: None,
            worktree: false,
            next_run_at: Some(next),
        })
        .unwrap()
}

#[test]
fn an_occurrence_is_claimed_once_across_connections() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("skald.db");
    let a = Store::open(&path).unwrap();
    let b = Store::open(&path).unwrap();
    let j = job(&a, 1000);
    assert_eq!(a.due_jobs(999).unwrap().len(), 0);
    assert_eq!(b.due_jobs(1000).unwrap().len(), 1);
    let claim = Claim {
        job_id: j.id,
        seen_next_run_at: 1000,
        scheduled_for: 1000,
        occurrences: 1,
        new_next_run_at: Some(61_000),
    };
    let won = a.claim_occurrence(&claim, "a", 60_000).unwrap();
    let lost = b.claim_occurrence(&claim, "b", 60_000).unwrap();
    assert!(won.is_some());
    assert!(lost.is_none());
    assert_eq!(b.get_job(j.id).unwrap().next_run_at, Some(61_000));
    let run = won.unwrap();
    assert!(a.renew_run_lease(run.id, "a", 60_000).unwrap());
    assert!(!b.renew_run_lease(run.id, "b", 60_000).unwrap());
    // Nothing to take over while the owner holds its lease.
    assert!(b.take_over_runs("b", 60_000).unwrap().is_empty());
    assert!(
        a.finish_run(run.id, "a", RunStatus::Interrupted, "")
            .unwrap()
    );
    let taken = b.take_over_runs("b", 60_000).unwrap();
    assert_eq!(taken.len(), 1);
    assert_eq!(taken[0].owner, "b");
    assert!(a.take_over_runs("a", 60_000).unwrap().is_empty());
    assert!(b.finish_run(run.id, "b", RunStatus::Done, "ok").unwrap());
    assert_eq!(a.list_runs(j.id).unwrap()[0].status, RunStatus::Done);
}

#[test]
fn enable_disable_delete() {
    let store = Store::open_in_memory().unwrap();
    let j = job(&store, 5);
    let off = store.set_job_enabled(j.id, false, None).unwrap();
    assert!(!off.enabled);
    assert_eq!(off.next_run_at, Some(5));
    assert!(store.due_jobs(10).unwrap().is_empty());
    let on = store.set_job_enabled(j.id, true, Some(50)).unwrap();
    assert_eq!(on.next_run_at, Some(50));
    assert!(store.advance_job(j.id, 50, Some(60)).unwrap());
    assert!(!store.advance_job(j.id, 50, Some(70)).unwrap());
    assert_eq!(store.next_job_time().unwrap(), Some(60));
    store.delete_job(j.id).unwrap();
    assert!(matches!(
        store.delete_job(j.id),
        Err(StoreError::NotFound { .. })
    ));
    let home = store
        .ensure_home_session("home_chat", "Home", None)
        .unwrap();
    assert_eq!(
        store
            .ensure_home_session("home_chat", "Home", None)
            .unwrap(),
        home
    );
    store.delete_session(home).unwrap();
    assert_ne!(
        store
            .ensure_home_session("home_chat", "Home", None)
            .unwrap(),
        home
    );
    store.set_app_state("home", "3").unwrap();
    store.set_app_state("home", "4").unwrap();
    assert_eq!(store.app_state("home").unwrap().as_deref(), Some("4"));
}
