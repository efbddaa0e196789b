//! The import cycles of a graph: its strongly connected components of more than one file
//! (petgraph's Tarjan), each told as a chain a reader can follow (`a.rs -> b.rs ->
//! a.rs`) with the names behind every import inside it. Invariant: a cycle is known by
//! its sorted files, so that the same knot is the same entry however it is reached.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;

use petgraph::algo::tarjan_scc;
use petgraph::graphmap::DiGraphMap;

use crate::imports::Graph;

/// Files that import each other, in a loop.
#[derive(Debug)]
pub struct Cycle {
    /// Its files, sorted.
    pub files: Vec<String>,
    /// A closed walk through every file of it, from the first.
    pub chain: Vec<String>,
    /// The imports inside it: from, to, the names taken.
    pub ties: Vec<(String, String, Vec<String>)>,
}

impl fmt::Display for Cycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.chain.join(" -> "))?;
        for (from, to, names) in &self.ties {
            writeln!(f, "    {from} -> {to}: {}", names.join(", "))?;
        }
        Ok(())
    }
}

/// Every cycle of `graph`, in order of their first file.
pub fn cycles(graph: &Graph) -> Vec<Cycle> {
    let mut files: DiGraphMap<&str, ()> = DiGraphMap::new();
    for (from, tos) in graph {
        files.add_node(from);
        for to in tos.keys() {
            files.add_edge(from, to, ());
        }
    }
    let mut out: Vec<Cycle> = tarjan_scc(&files)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|component| {
            let mut files: Vec<String> = component.iter().map(|f| (*f).to_owned()).collect();
            files.sort();
            let inside: BTreeSet<&str> = component.into_iter().collect();
            let ties = files
                .iter()
                .flat_map(|from| {
                    graph[from]
                        .iter()
                        .filter(|(to, _)| inside.contains(to.as_str()))
                        .map(|(to, names)| {
                            (from.clone(), to.clone(), names.iter().cloned().collect())
                        })
                })
                .collect();
            Cycle {
                chain: walk(graph, &inside, &files[0]),
                files,
                ties,
            }
        })
        .collect();
    out.sort_by(|a, b| a.files.cmp(&b.files));
    out
}

/// A closed walk from `start` through every file of `inside`: each time the shortest way
/// to the nearest file not yet passed, then the shortest way back.
fn walk(graph: &Graph, inside: &BTreeSet<&str>, start: &str) -> Vec<String> {
    let mut chain = vec![start.to_owned()];
    let mut passed: BTreeSet<&str> = BTreeSet::from([start]);
    let mut at = start.to_owned();
    loop {
        let done = passed.len() == inside.len();
        let Some(way) = shortest(graph, inside, &at, |n| {
            if done {
                n == start
            } else {
                !passed.contains(n)
            }
        }) else {
            break;
        };
        for step in &way {
            passed.insert(inside.get(step.as_str()).copied().unwrap_or(start));
        }
        at = way.last().cloned().unwrap_or_default();
        chain.extend(way);
        if done {
            break;
        }
    }
    chain
}

/// The shortest way (without `from`) inside `inside` to a file for which `goal` holds.
fn shortest(
    graph: &Graph,
    inside: &BTreeSet<&str>,
    from: &str,
    goal: impl Fn(&str) -> bool,
) -> Option<Vec<String>> {
    let mut came: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = VecDeque::from([from.to_owned()]);
    while let Some(node) = queue.pop_front() {
        for next in graph.get(&node).into_iter().flat_map(BTreeMap::keys) {
            if !inside.contains(next.as_str()) || came.contains_key(next) {
                continue;
            }
            came.insert(next.clone(), node.clone());
            if goal(next) {
                let mut way = vec![next.clone()];
                while let Some(prev) = came.get(way.last().unwrap()).filter(|p| *p != from) {
                    way.push(prev.clone());
                }
                way.reverse();
                return Some(way);
            }
            queue.push_back(next.clone());
        }
    }
    None
}
