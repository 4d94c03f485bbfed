//! TLS servers for the TLS tests (issue 15 item 2): a test PKI made with the
//! `openssl` command line (a CA, a server certificate for `localhost` only,
//! a client certificate, and an unrelated CA), a throwaway Postgres cluster
//! that accepts TLS only, and a second RabbitMQ node with an `amqps` listener
//! only. Both servers run as their service users when the tests run as root
//! (as CI does), and are stopped when dropped.

use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};

/// A free TCP port on 127.0.0.1 (free when asked: good enough for a test).
pub fn free_port() -> anyhow::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn run(cmd: &mut Command) -> anyhow::Result<()> {
    let out = cmd.output().with_context(|| format!("running {cmd:?}"))?;
    if !out.status.success() {
        bail!(
            "{cmd:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// `cmd` run as `user` when this process is root (servers refuse to run as
/// root), else as is.
fn as_user(user: &str, program: &str) -> Command {
    if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", user, "--", program]);
        c
    } else {
        Command::new(program)
    }
}

fn chown_to(user: &str, path: &Path) -> anyhow::Result<()> {
    if is_root() {
        run(Command::new("chown").args(["-R", user]).arg(path))?;
    }
    Ok(())
}

fn wait_for_port(port: u16, deadline: Duration) -> anyhow::Result<()> {
    let start = Instant::now();
    while start.elapsed() < deadline {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    bail!("nothing listens on 127.0.0.1:{port} after {deadline:?}")
}

/// The test PKI, in its own directory.
#[derive(Debug)]
pub struct Pki {
    /// The directory (removed on drop).
    pub dir: PathBuf,
}

impl Pki {
    /// Makes the CA, the server certificate (`DNS:localhost` only: connecting
    /// by IP address must fail verification), a client certificate and an
    /// unrelated CA.
    pub fn generate() -> anyhow::Result<Self> {
        let dir = std::env::temp_dir().join(format!("cw_pki_{}", crate::places::random_suffix()));
        std::fs::create_dir_all(&dir)?;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))?;
        let openssl = |args: &[&str]| run(Command::new("openssl").args(args).current_dir(&dir));
        for ca in ["ca", "other-ca"] {
            openssl(&[
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-subj",
                &format!("/CN=chunk-worker test {ca}"),
                "-keyout",
                &format!("{ca}.key"),
                "-out",
                &format!("{ca}.pem"),
            ])?;
        }
        std::fs::write(dir.join("server.ext"), "subjectAltName=DNS:localhost\n")?;
        std::fs::write(dir.join("client.ext"), "extendedKeyUsage=clientAuth\n")?;
        for (name, cn) in [("server", "localhost"), ("client", "chunk-worker")] {
            openssl(&[
                "req",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-subj",
                &format!("/CN={cn}"),
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &format!("{name}.csr"),
            ])?;
            openssl(&[
                "x509",
                "-req",
                "-in",
                &format!("{name}.csr"),
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                &format!("{name}.ext"),
                "-out",
                &format!("{name}.pem"),
            ])?;
        }
        for f in std::fs::read_dir(&dir)? {
            std::fs::set_permissions(f?.path(), std::fs::Permissions::from_mode(0o644))?;
        }
        Ok(Self { dir })
    }

    /// A file of the PKI, e.g. `ca.pem`.
    pub fn file(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The directory of the Postgres server programs (`pg_config --bindir`).
pub fn pg_bindir() -> Option<PathBuf> {
    let out = Command::new("pg_config").arg("--bindir").output().ok()?;
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    dir.join("initdb").exists().then_some(dir)
}

/// A Postgres cluster on its own port that accepts only TLS connections
/// with a client certificate its CA signed (`hostssl ... clientcert=verify-ca`;
/// plain `host` connections are rejected).
#[derive(Debug)]
pub struct PgTls {
    /// Its port.
    pub port: u16,
    dir: PathBuf,
    bindir: PathBuf,
}

impl PgTls {
    /// initdb, configure, start (`pg_ctl -w`).
    pub fn start(bindir: &Path, pki: &Pki) -> anyhow::Result<Self> {
        let dir = std::env::temp_dir().join(format!("cw_pgtls_{}", crate::places::random_suffix()));
        std::fs::create_dir_all(&dir)?;
        let data = dir.join("data");
        for f in ["server.pem", "server.key", "ca.pem"] {
            std::fs::copy(pki.dir.join(f), dir.join(f))?;
        }
        std::fs::set_permissions(
            dir.join("server.key"),
            std::fs::Permissions::from_mode(0o600),
        )?;
        chown_to("postgres", &dir)?;
        let bin = |name: &str| bindir.join(name).display().to_string();
        run(as_user("postgres", &bin("initdb"))
            .args(["-A", "trust", "-U", "postgres", "--no-sync", "-D"])
            .arg(&data))?;
        let port = free_port()?;
        let conf = format!(
            "port = {port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{dir}'\n\
             ssl = on\nssl_cert_file = '{dir}/server.pem'\nssl_key_file = '{dir}/server.key'\n\
             ssl_ca_file = '{dir}/ca.pem'\nfsync = off\n",
            dir = dir.display()
        );
        append(&data.join("postgresql.conf"), &conf)?;
        std::fs::write(
            data.join("pg_hba.conf"),
            "local all all trust\nhostssl all all 127.0.0.1/32 trust clientcert=verify-ca\nhost all all 127.0.0.1/32 reject\n",
        )?;
        chown_to("postgres", &dir)?;
        run(as_user("postgres", &bin("pg_ctl"))
            .args(["-w", "-t", "30", "-l"])
            .arg(dir.join("log"))
            .arg("-D")
            .arg(&data)
            .arg("start"))?;
        Ok(Self {
            port,
            dir,
            bindir: bindir.to_owned(),
        })
    }
}

impl Drop for PgTls {
    fn drop(&mut self) {
        let _ = as_user(
            "postgres",
            &self.bindir.join("pg_ctl").display().to_string(),
        )
        .args(["-m", "immediate", "-D"])
        .arg(self.dir.join("data"))
        .arg("stop")
        .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn append(path: &Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(path)?;
    f.write_all(text.as_bytes())?;
    Ok(())
}

/// Whether a RabbitMQ server is installed here.
pub fn rabbitmq_installed() -> bool {
    Command::new("rabbitmq-server")
        .arg("--help")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// A second RabbitMQ node (`cwtls<random>@localhost`) with one listener,
/// `amqps` on its own port, that asks for a client certificate
/// (`verify_peer`) and refuses a client without one when `require_client_cert`.
#[derive(Debug)]
pub struct RabbitTls {
    /// The amqps port.
    pub port: u16,
    node: String,
    dir: PathBuf,
    child: Option<Child>,
}

impl RabbitTls {
    /// Starts the node and waits for its listener (a few seconds).
    pub fn start(pki: &Pki, require_client_cert: bool) -> anyhow::Result<Self> {
        let suffix = crate::places::random_suffix();
        let dir = std::env::temp_dir().join(format!("cw_rmqtls_{suffix}"));
        std::fs::create_dir_all(&dir)?;
        for f in ["server.pem", "server.key", "ca.pem"] {
            std::fs::copy(pki.dir.join(f), dir.join(f))?;
        }
        let port = free_port()?;
        let dist_port = free_port()?;
        let node = format!("cwtls{suffix}@localhost");
        std::fs::write(
            dir.join("rabbitmq.conf"),
            format!(
                "listeners.tcp = none\nlisteners.ssl.default = 127.0.0.1:{port}\n\
                 ssl_options.cacertfile = {d}/ca.pem\nssl_options.certfile = {d}/server.pem\n\
                 ssl_options.keyfile = {d}/server.key\nssl_options.verify = verify_peer\n\
                 ssl_options.fail_if_no_peer_cert = {require_client_cert}\n\
                 loopback_users = none\n",
                d = dir.display()
            ),
        )?;
        std::fs::write(dir.join("enabled_plugins"), "[].\n")?;
        chown_to("rabbitmq", &dir)?;
        let d = dir.display().to_string();
        let child = Command::new("rabbitmq-server")
            .env("RABBITMQ_NODENAME", &node)
            .env("RABBITMQ_CONFIG_FILE", format!("{d}/rabbitmq"))
            .env("RABBITMQ_MNESIA_BASE", format!("{d}/mnesia"))
            .env("RABBITMQ_LOG_BASE", format!("{d}/log"))
            .env(
                "RABBITMQ_ENABLED_PLUGINS_FILE",
                format!("{d}/enabled_plugins"),
            )
            .env("RABBITMQ_FEATURE_FLAGS_FILE", format!("{d}/feature_flags"))
            .env("RABBITMQ_PID_FILE", format!("{d}/pid"))
            .env("RABBITMQ_DIST_PORT", dist_port.to_string())
            .stdout(std::fs::File::create(dir.join("out.txt"))?)
            .stderr(Stdio::null())
            .spawn()
            .context("starting rabbitmq-server")?;
        let mut node_handle = Self {
            port,
            node,
            dir,
            child: Some(child),
        };
        if let Err(e) = wait_for_port(port, Duration::from_secs(60)) {
            let out = std::fs::read_to_string(node_handle.dir.join("out.txt")).unwrap_or_default();
            node_handle.stop();
            bail!("{e}; rabbitmq-server said:\n{out}");
        }
        Ok(node_handle)
    }

    fn stop(&mut self) {
        let _ = Command::new("rabbitmqctl")
            .args(["-n", &self.node, "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for RabbitTls {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
