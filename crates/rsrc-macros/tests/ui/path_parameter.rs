use std::path::PathBuf;

use rsrc::resources;

struct Files;

#[resources]
impl Files {
    #[resource(uri = "files://{+path}")]
    fn file(&self, path: PathBuf) -> String {
        path.display().to_string()
    }
}

fn main() {}
