use rsrc::resources;

struct Notion;

#[resources]
impl Notion {
    #[resource(uri = "notion://workspace/info")]
    fn info(&mut self) -> String {
        String::new()
    }
}

fn main() {}
