use std::process::ExitCode;

use copyhound_core::config::Backend;

use super::Loaded;
use crate::cli::ConfigCommand;

pub fn run(loaded: anyhow::Result<Loaded>, command: ConfigCommand) -> anyhow::Result<ExitCode> {
    match command {
        ConfigCommand::Check => check(loaded),
    }
}

fn check(loaded: anyhow::Result<Loaded>) -> anyhow::Result<ExitCode> {
    let (config, file) = match loaded {
        Ok(loaded) => loaded,
        Err(error) => {
            eprintln!("error: {error:#}");
            return Ok(ExitCode::from(2));
        }
    };
    match &file {
        Some(path) => println!("# configuration file: {}", path.display()),
        None => println!("# configuration file: none (defaults, environment and flags only)"),
    }
    for (component, backend) in [
        ("store", config.store_backend()),
        ("index", config.index_backend()),
        ("queue", config.queue_backend()),
    ] {
        let described = match backend {
            Backend::Embedded(dir) => format!("embedded, files in {}", dir.display()),
            Backend::Remote(url) => copyhound_core::config::mask_url(&url),
        };
        println!("# {component}: {described}");
    }
    println!("# configuration is valid; effective values (secrets masked):\n");
    print!("{}", toml::to_string_pretty(&config.masked())?);
    Ok(ExitCode::SUCCESS)
}
