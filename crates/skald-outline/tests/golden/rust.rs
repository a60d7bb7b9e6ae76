//! Crate doc.
use std::fmt;

/// A point.
#[derive(Debug)]
pub struct Point {
    x: i32,
}

pub enum Shape {
    Circle,
}

pub trait Area {
    fn area(&self) -> f64;
    const UNIT: &'static str;
}

impl Point {
    pub fn new() -> Self {
        Point { x: 0 }
    }

    fn private(&self) {}
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.x)
    }
}

pub fn top_level<T: Clone>(v: Vec<T>) -> usize {
    v.len()
}

mod inner {
    pub(crate) fn helper() {}
}

macro_rules! square {
    ($x:expr) => { $x * $x };
}

type Alias = Vec<Point>;
const LIMIT: usize = 10;
static NAME: &str = "x";

extern "C" {
    pub fn c_function(x: i32) -> i32;
    static C_GLOBAL: i32;
}

cfg_if::cfg_if! {
    if #[cfg(unix)] {
        pub struct UnixOnly;
    } else {
        pub fn elsewhere() {}
    }
}
