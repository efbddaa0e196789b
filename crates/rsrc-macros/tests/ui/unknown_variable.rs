use rsrc::resources;

struct Notion;

#[resources]
impl Notion {
    #[resource(uri = "notion://pages/{pageId}")]
    fn page(&self, pag_id: String) -> String {
        pag_id
    }
}

fn main() {}
