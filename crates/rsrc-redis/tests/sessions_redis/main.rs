//! Sessions of the 2025 revisions shared through Redis: two HTTP instances on one Redis
//! (a throwaway `redis-server`) serve one session, whichever gets each request — its
//! subscriptions, log level, GET stream, resumption, DELETE and expiry — and what
//! happens when Redis loses data, an announcement is lost, or two instances write at
//! once. Some tests write to Redis directly, to stand for another instance whose
//! announcement has not arrived.
//!
//! One test binary, its tests by topic: [`sharing`] (one session on every instance),
//! [`streams`] (its SSE streams resumed elsewhere), [`consistency`] (instances writing at
//! once, lost announcements), [`recovery`] (Redis restarting empty) and [`trust`] (what
//! Redis holds is neither secret nor believed); [`support`] is what they all use.

#[path = "../common/bus_keys.rs"]
mod bus_keys;
#[path = "../../../rsrc/tests/common/mod.rs"]
mod common;
#[path = "../../../rsrc-http/tests/common/http.rs"]
mod harness;
#[path = "../common/redis_proxy.rs"]
mod redis_proxy;

mod consistency;
mod recovery;
mod sharing;
mod streams;
mod support;
mod trust;
