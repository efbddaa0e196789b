//! The matching automaton and its linear-time simulation (a Pike VM).
//!
//! A [`Program`] is a small non-deterministic automaton over characters, compiled from
//! template pieces by [`mod@super::compile`]. [`Program::exec`] runs every alternative at once,
//! one input character at a time: the set of live threads is deduplicated by instruction,
//! so it never holds more threads than the program has instructions. The cost is
//! therefore `O(uri.len() × program size × capture slots)`, linear in the URI for a given
//! template, with no backtracking and no recursion.
//!
//! Threads are kept in priority order and a thread reaching an instruction first wins it,
//! so among all ways the input matches, the one chosen is the first in priority order (as
//! in leftmost-first regex engines). The compiler encodes the crate's tie-break rules as
//! these priorities.

/// Marks a capture slot that was never set.
pub(crate) const UNSET: usize = usize::MAX;

/// A set of characters: an ASCII bitmap plus one flag for every non-ASCII character.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CharClass {
    ascii: u128,
    non_ascii: bool,
}

impl CharClass {
    /// The ASCII bytes for which `f` is true, plus all non-ASCII characters when `non_ascii`.
    pub(crate) fn from_fn(f: impl Fn(u8) -> bool, non_ascii: bool) -> Self {
        let mut ascii = 0u128;
        for b in 0u8..128 {
            if f(b) {
                ascii |= 1 << b;
            }
        }
        CharClass { ascii, non_ascii }
    }

    fn contains(&self, c: char) -> bool {
        let c = u32::from(c);
        if c < 128 {
            self.ascii & (1 << c) != 0
        } else {
            self.non_ascii
        }
    }
}

/// One automaton instruction.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Inst {
    /// Consume exactly this character.
    Char(char),
    /// Consume one character of the class with this index.
    Class(u16),
    /// Continue at both targets; the first has priority.
    Split(u32, u32),
    /// Continue at the target.
    Jmp(u32),
    /// Record the current input offset in a capture slot.
    Save(u16),
    /// The whole input must end here.
    Match,
    /// Dead end.
    Fail,
}

/// A compiled automaton.
#[derive(Clone, Debug)]
pub(crate) struct Program {
    pub(crate) insts: Vec<Inst>,
    pub(crate) classes: Vec<CharClass>,
    pub(crate) nslots: usize,
}

/// The threads alive at one input position: instruction plus capture slots, in priority
/// order.
struct Threads {
    pcs: Vec<u32>,
    slots: Vec<usize>,
}

impl Threads {
    fn new() -> Self {
        Threads {
            pcs: Vec::new(),
            slots: Vec::new(),
        }
    }
    fn clear(&mut self) {
        self.pcs.clear();
        self.slots.clear();
    }
}

enum Frame {
    Explore(u32),
    Restore(u16, usize),
}

/// Scratch state of one run.
struct Vm<'p> {
    prog: &'p Program,
    /// `visited[pc] == generation` when `pc` was already reached at this position.
    visited: Vec<u32>,
    generation: u32,
    stack: Vec<Frame>,
    scratch: Vec<usize>,
}

impl Vm<'_> {
    /// Follows every non-consuming instruction from `start`, adding the consuming ones (and
    /// `Match`) to `list`, with `self.scratch` as the capture slots at `pos`.
    fn add(&mut self, list: &mut Threads, start: u32, pos: usize) {
        self.stack.push(Frame::Explore(start));
        while let Some(frame) = self.stack.pop() {
            match frame {
                Frame::Restore(slot, old) => self.scratch[usize::from(slot)] = old,
                Frame::Explore(pc) => {
                    let Some(seen) = self.visited.get_mut(pc as usize) else {
                        continue;
                    };
                    if *seen == self.generation {
                        continue;
                    }
                    *seen = self.generation;
                    match self.prog.insts[pc as usize] {
                        Inst::Jmp(t) => self.stack.push(Frame::Explore(t)),
                        Inst::Split(a, b) => {
                            self.stack.push(Frame::Explore(b));
                            self.stack.push(Frame::Explore(a));
                        }
                        Inst::Save(slot) => {
                            let s = usize::from(slot);
                            self.stack.push(Frame::Restore(slot, self.scratch[s]));
                            self.scratch[s] = pos;
                            self.stack.push(Frame::Explore(pc + 1));
                        }
                        Inst::Fail => {}
                        Inst::Char(_) | Inst::Class(_) | Inst::Match => {
                            list.pcs.push(pc);
                            list.slots.extend_from_slice(&self.scratch);
                        }
                    }
                }
            }
        }
    }

    fn next_generation(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.visited.fill(0);
            self.generation = 1;
        }
    }
}

impl Program {
    /// Runs the automaton over the whole of `input`.
    ///
    /// Returns the capture slots of the highest-priority full match. When there is none and
    /// `split_at` is given, returns the slots of the highest-priority match of the shortest
    /// prefix that is followed by `split_at`, together with that prefix's length.
    pub(crate) fn exec(&self, input: &str, split_at: Option<char>) -> Option<(Vec<usize>, usize)> {
        let n = self.nslots;
        let mut vm = Vm {
            prog: self,
            visited: vec![0; self.insts.len()],
            generation: 1,
            stack: Vec::new(),
            scratch: vec![UNSET; n],
        };
        let mut clist = Threads::new();
        let mut nlist = Threads::new();
        vm.add(&mut clist, 0, 0);
        let mut fallback: Option<(Vec<usize>, usize)> = None;
        let mut chars = input.char_indices();
        loop {
            let next = chars.next();
            let pos = next.map_or(input.len(), |(i, _)| i);
            // A thread at `Match` succeeds only at the end of the input (or at a split point).
            for (t, &pc) in clist.pcs.iter().enumerate() {
                if matches!(self.insts[pc as usize], Inst::Match) {
                    let caps = &clist.slots[t * n..(t + 1) * n];
                    match next {
                        None => return Some((caps.to_vec(), pos)),
                        Some((_, c)) if fallback.is_none() && split_at == Some(c) => {
                            fallback = Some((caps.to_vec(), pos));
                        }
                        Some(_) => {}
                    }
                    break;
                }
            }
            let Some((_, c)) = next else {
                return fallback;
            };
            let after = pos + c.len_utf8();
            vm.next_generation();
            nlist.clear();
            for (t, &pc) in clist.pcs.iter().enumerate() {
                let ok = match self.insts[pc as usize] {
                    Inst::Char(x) => x == c,
                    Inst::Class(k) => self.classes[usize::from(k)].contains(c),
                    _ => false,
                };
                if ok {
                    vm.scratch.copy_from_slice(&clist.slots[t * n..(t + 1) * n]);
                    vm.add(&mut nlist, pc + 1, after);
                }
            }
            std::mem::swap(&mut clist, &mut nlist);
            if clist.pcs.is_empty() {
                return fallback;
            }
        }
    }
}
