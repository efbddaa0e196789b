use rsrc::resources;

struct Notion;

#[resources]
impl Notion {
    #[resource(uri = "notion://workspace/info", mime = "application/json", priority = 2.5, cache = "soon")]
    fn info(&self) -> String {
        String::new()
    }
}

fn main() {}
