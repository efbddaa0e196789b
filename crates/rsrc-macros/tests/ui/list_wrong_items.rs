use rsrc::resources;

struct Db;

#[resources]
impl Db {
    #[resource(uri = "db://{table}/{key}")]
    fn row(&self, table: String, key: u64) -> String {
        format!("{table}/{key}")
    }

    #[list(row)]
    fn rows(&self) -> Vec<String> {
        vec!["books/1".to_owned()]
    }
}

fn main() {}
