//! A local TCP proxy that can cut every connection through it and refuse
//! new ones until restored: an outage of one client's view of a server,
//! without stopping the server other tests share.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// A running proxy; stops when dropped.
#[derive(Debug)]
pub struct Proxy {
    addr: SocketAddr,
    up: Arc<AtomicBool>,
    // std Mutex: held only to swap a token, never across an await.
    generation: Arc<Mutex<CancellationToken>>,
    stop: CancellationToken,
}

impl Proxy {
    /// Listens on a free loopback port and forwards to `target`.
    pub async fn start(target: &str) -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let target: SocketAddr = target.parse()?;
        let up = Arc::new(AtomicBool::new(true));
        let generation = Arc::new(Mutex::new(CancellationToken::new()));
        let stop = CancellationToken::new();
        let (up2, gen2, stop2) = (up.clone(), generation.clone(), stop.clone());
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    a = listener.accept() => a,
                    () = stop2.cancelled() => return,
                };
                let Ok((client, _)) = accepted else { continue };
                if !up2.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let cut = match gen2.lock() {
                    Ok(g) => g.clone(),
                    Err(_) => return,
                };
                tokio::spawn(pump(client, target, cut));
            }
        });
        Ok(Self {
            addr,
            up,
            generation,
            stop,
        })
    }

    /// `127.0.0.1:<port>`.
    pub fn addr(&self) -> String {
        self.addr.to_string()
    }

    /// Closes every connection and refuses new ones.
    pub fn cut(&self) {
        self.up.store(false, Ordering::SeqCst);
        if let Ok(mut g) = self.generation.lock() {
            g.cancel();
            *g = CancellationToken::new();
        }
    }

    /// Accepts connections again.
    pub fn restore(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.cut();
        self.stop.cancel();
    }
}

async fn pump(mut client: TcpStream, target: SocketAddr, cut: CancellationToken) {
    let Ok(mut server) = TcpStream::connect(target).await else {
        return;
    };
    tokio::select! {
        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
        () = cut.cancelled() => {}
    }
}
