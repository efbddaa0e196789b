//! The change bus on Redis: two servers on one Redis (a throwaway `redis-server`) share
//! changes, signals and leases, and recover from Redis going away, from a subscription
//! that dies without a word, and from a stalled runtime.
//!
//! One test binary, its tests by topic: [`changes`] (changes and signals between
//! instances), [`leases`], [`recovery`] (the bus mending itself) and [`trust`] (who may
//! speak on the bus, and how it is reached); [`support`] is what they all use.

#[path = "../common/bus_keys.rs"]
mod bus_keys;
#[path = "../../../rsrc/tests/common/mod.rs"]
mod common;
#[path = "../common/redis_proxy.rs"]
mod redis_proxy;

mod changes;
mod leases;
mod recovery;
mod support;
mod trust;
