//! The `copyhound` binary: parses arguments, reads the configuration and calls
//! the runtime (`copyhound_runtime::Node`), which resolves the backends. Exit
//! codes: 0 success, 1 a failed command, 2 an invalid configuration or
//! command line (every command alike), 3-4 a crawl's outcome (`crawl`).

mod cli;
mod commands;
mod logging;
mod text_input;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command, EvidenceCommand};

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Logging follows the configuration, so the configuration is read first; a bad
    // configuration is reported by the command (`config check` explains it).
    let loaded = commands::load_config(&cli.global);
    let log_config = loaded
        .as_ref()
        .map(|(config, _)| config.log.clone())
        .unwrap_or_default();
    if let Err(error) = logging::init(&log_config, cli.global.log_format, cli.global.verbose) {
        eprintln!("error: cannot start logging: {error:#}");
        return ExitCode::from(2);
    }
    // One TLS provider for every HTTP client of the binary (reqwest is built
    // without a default one). Fails only when one is installed, as good.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli, loaded)) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Exit code of an invalid configuration, whatever the command.
const EXIT_CONFIG: u8 = 2;

async fn run(cli: Cli, loaded: anyhow::Result<commands::Loaded>) -> anyhow::Result<ExitCode> {
    if let Command::Config(args) = cli.command {
        return commands::config::run(loaded, args);
    }
    // Verifying needs no configuration: a bundle is checked on any machine.
    if let Command::Evidence(EvidenceCommand::Verify(args)) = cli.command {
        return commands::evidence::verify(&args);
    }
    let (config, _file) = match loaded {
        Ok(loaded) => loaded,
        Err(error) => {
            eprintln!("error: {error:#}");
            return Ok(ExitCode::from(EXIT_CONFIG));
        }
    };
    match cli.command {
        Command::Config(_) => unreachable!("handled above"),
        Command::Demo(args) => commands::demo::run(&config, args).await,
        Command::Fingerprint(args) => commands::fingerprint::fingerprint(args),
        Command::Compare(args) => commands::fingerprint::compare(args),
        Command::Works(cli::WorksCommand::Import(args)) => {
            commands::pipeline::import(&config, args).await
        }
        Command::Works(cli::WorksCommand::List(args)) => {
            commands::sites::works_list(&config, args).await
        }
        Command::Serve(args) => commands::serve::serve(&config, args).await,
        Command::Scheduler => commands::serve::scheduler(&config).await,
        Command::Sites(command) => commands::sites::sites(&config, command).await,
        Command::Publishers(command) => commands::publishers::publishers(&config, command).await,
        Command::Keys(command) => commands::publishers::keys(&config, command).await,
        Command::Crawl(args) => commands::sites::crawl(&config, args).await,
        Command::Matches(command) => commands::sites::matches(&config, command).await,
        Command::Evidence(EvidenceCommand::Bundle(args)) => {
            commands::evidence::bundle(&config, args).await
        }
        Command::Evidence(EvidenceCommand::Verify(_)) => unreachable!("handled above"),
        Command::Worker(args) => commands::pipeline::worker(&config, args).await,
        Command::Migrate(command) => commands::pipeline::migrate(&config, command).await,
        Command::Index(command) => commands::pipeline::index(&config, command).await,
        Command::Tasks(command) => commands::pipeline::tasks(&config, command).await,
        Command::Report(args) => commands::report::run(&config, args).await,
        Command::Eval(args) => copyhound_bench::eval::run(&config, args).await,
        Command::Bench(command) => commands::bench::run(&config, command).await,
        Command::Health(args) => commands::health::run(&config, args).await,
    }
}
