use rsrc::resources;

struct Counter;

#[resources]
impl Counter {
    #[resource(uri = "counter://value")]
    fn value(&self) -> u64 {
        42
    }
}

fn main() {}
