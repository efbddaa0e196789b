//! Leases across instances: one holder at a time, taken over within seconds when its
//! holder dies, given up at once when it leaves (even with renewals in flight), and kept
//! without a gap through a stalled runtime.

use std::time::{Duration, Instant};

use rsrc::Server;
use rsrc::bus::Lease;
use rsrc_redis::{RedisBus, RedisBusOptions};
use rsrc_testkit::redis::RedisServer;

use crate::redis_proxy::RedisProxy;
use crate::support::{eventually, instance, options, redis_conn};

fn holders(leases: &[&Lease]) -> usize {
    leases.iter().filter(|l| l.held()).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_instance_holds_a_lease_and_another_takes_over_when_it_dies() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    // The first holder runs on a runtime of its own, which the test shuts down: its tasks
    // stop without releasing anything, as when a process is killed.
    let url = redis.url();
    let (doomed, first, _server) = std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let (lease, server) = rt.block_on(async {
            let bus = RedisBus::connect(&url, options()).await.unwrap();
            let server = Server::builder("doomed", "0").bus(bus).build().unwrap();
            (server.changes().lease("db://shop"), server)
        });
        (rt, lease, server)
    })
    .join()
    .unwrap();
    assert!(eventually(|| first.held()).await, "nobody took the lease");
    let (b, c) = (instance(&redis).await, instance(&redis).await);
    let (lb, lc) = (
        b.changes().lease("db://shop"),
        c.changes().lease("db://shop"),
    );
    // Through more than two renewals: the holder keeps it, nobody else has it.
    let until = Instant::now() + Duration::from_millis(2500);
    while Instant::now() < until {
        assert!(!lb.held() && !lc.held(), "one holder at a time");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(eventually(|| first.held()).await);
    // Another name is another lease.
    let other = b.changes().lease("git://repo");
    assert!(eventually(|| other.held()).await);

    let died = Instant::now();
    std::thread::spawn(move || drop(doomed)).join().unwrap();
    let deadline = died + Duration::from_secs(5);
    while holders(&[&lb, &lc]) == 0 {
        assert!(Instant::now() < deadline, "no takeover within 5 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    eprintln!("the lease moved {:?} after its holder died", died.elapsed());
    let until = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < until {
        assert!(holders(&[&lb, &lc]) <= 1, "one holder at a time");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_leaving_gives_its_leases_up_before_they_would_expire() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    // Leases that last 9 s: only giving them up lets another take over within 7 s.
    let mut slow = options();
    slow.lease_ttl = Duration::from_secs(9);
    let bus = |o: RedisBusOptions| {
        let url = redis.url();
        async move { RedisBus::connect(&url, o).await.unwrap() }
    };
    let a = Server::builder("a", "0")
        .bus(bus(slow.clone()).await)
        .build()
        .unwrap();
    let first = a.changes().lease("db://shop");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !first.held() {
        assert!(Instant::now() < deadline, "nobody took the lease");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let b = Server::builder("b", "0")
        .bus(bus(slow).await)
        .build()
        .unwrap();
    let second = b.changes().lease("db://shop");
    a.leave_cluster().await;
    assert!(!first.held(), "given up at once");
    let deadline = Instant::now() + Duration::from_secs(7);
    while !second.held() {
        assert!(
            Instant::now() < deadline,
            "the other instance did not take the lease before it would have expired"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!first.held(), "a leaving instance takes nothing again");
}

#[test]
fn a_holder_stalled_past_its_local_hold_keeps_the_lease_without_a_gap() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    // The holder's runtime has one worker, which the test stalls.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (lease, _server) = rt.block_on(async {
        let server = instance(&redis).await;
        (server.changes().lease("db://shop"), server)
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while !lease.held() {
        assert!(Instant::now() < deadline, "nobody took the lease");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut c = redis_conn(&redis.url());
    let key = "rsrc:lease:db://shop";
    // Just after a renewal (3 s to live, renewed every second)...
    loop {
        let left: i64 = redis::cmd("PTTL").arg(key).query(&mut c).unwrap();
        if left > 2900 {
            break;
        }
        assert!(Instant::now() < deadline, "the lease is not renewed");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(50));
    // ...the runtime stalls past 80 % of the TTL (the hold lapses here), not past the TTL.
    rt.spawn(async { std::thread::sleep(Duration::from_millis(2500)) });
    let stalled = Instant::now();
    while stalled.elapsed() < Duration::from_millis(4500) {
        let holder: Option<String> = redis::cmd("GET").arg(key).query(&mut c).unwrap();
        assert!(
            holder.is_some(),
            "the lease was free {:?} after the stall began",
            stalled.elapsed()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(lease.held(), "held again once the runtime runs");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_while_renewals_are_in_flight_leaves_no_lease_held_anywhere() {
    use rsrc::bus::ChangeBus as _;
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let mut c = redis_conn(&redis.url());
    // Redis's answers take 100 ms: a renewal is in flight most of the time, and leaving
    // lands while one is.
    let proxy = RedisProxy::start(redis.port()).await;
    let mut quick = options();
    quick.lease_ttl = Duration::from_millis(1500);
    quick.timeout = Duration::from_secs(3);
    for trial in 0..3_u64 {
        proxy.delay(Duration::ZERO);
        let bus = RedisBus::connect(&proxy.url, quick.clone()).await.unwrap();
        let leases: Vec<Lease> = (0..5)
            .map(|i| bus.lease(&format!("t{trial}:{i}")))
            .collect();
        assert!(
            eventually(|| leases.iter().all(Lease::held)).await,
            "the leases are taken"
        );
        proxy.delay(Duration::from_millis(100));
        tokio::time::sleep(Duration::from_millis(700 + 130 * trial)).await;
        bus.leave().await;
        // Giving the leases up took round trips of 100 ms: the attempt that was in flight
        // has been answered, and it did not make its lease held here again (held, it
        // would stay so until its local hold lapsed, though Redis has no key).
        let held = leases.iter().filter(|l| l.held()).count();
        assert_eq!(held, 0, "trial {trial}: held here after leaving");
        tokio::time::sleep(Duration::from_millis(1000)).await;
        assert!(
            !leases.iter().any(Lease::held),
            "trial {trial}: taken again"
        );
        let left: Vec<String> = redis::cmd("KEYS")
            .arg(format!("rsrc:lease:t{trial}:*"))
            .query(&mut c)
            .unwrap();
        assert!(left.is_empty(), "trial {trial}: still in Redis: {left:?}");
    }
}
