use rsrc::resources;

struct Notion;

#[resources]
impl Notion {
    #[resource(uri = "notion://pages/{pageId")]
    fn page(&self, page_id: String) -> String {
        page_id
    }
}

fn main() {}
