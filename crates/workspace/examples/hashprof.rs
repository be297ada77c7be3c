#![allow(clippy::unwrap_used, clippy::expect_used)]
//! TEMPORARY profiling harness (to be removed).
use git2::{ObjectType, Oid, Repository};
use std::path::Path;
use std::time::Instant;

fn file_path(i: usize) -> String {
    let dir = i / 100;
    format!("d{:02}/d{:02}/f{i:06}.txt", dir / 100, dir % 100)
}

fn main() {
    let wt = std::fs::read_to_string("/var/tmp/ws-prof-home/wt").unwrap();
    let wt = Path::new(wt.trim());
    let repo = Repository::open(wt).unwrap();
    let mut base = 50000;
    let mut files = |tag: &str| {
        let v: Vec<String> = (base..base + 100).map(file_path).collect();
        for (k, p) in v.iter().enumerate() {
            std::fs::write(
                wt.join(p),
                (0..60)
                    .map(|l| {
                        format!(
                            "file {tag} {k} {} {base} line {l}: lorem ipsum dolor sit amet\n",
                            std::process::id()
                        )
                    })
                    .collect::<String>(),
            )
            .unwrap();
        }
        base += 100;
        v
    };
    for round in 0..3 {
        let v = files("blob_path");
        let t = Instant::now();
        for p in &v {
            repo.blob_path(&wt.join(p)).unwrap();
        }
        eprintln!(
            "{round} blob_path x100: {:.1} ms",
            t.elapsed().as_secs_f64() * 1e3
        );
        let v = files("hash");
        let t = Instant::now();
        for p in &v {
            let b = std::fs::read(wt.join(p)).unwrap();
            Oid::hash_object(ObjectType::Blob, &b).unwrap();
        }
        eprintln!(
            "{round} read+hash x100: {:.1} ms",
            t.elapsed().as_secs_f64() * 1e3
        );
        let v = files("blob");
        let t = Instant::now();
        for p in &v {
            let b = std::fs::read(wt.join(p)).unwrap();
            repo.blob(&b).unwrap();
        }
        eprintln!(
            "{round} read+blob(loose) x100: {:.1} ms",
            t.elapsed().as_secs_f64() * 1e3
        );
        let v = files("mempack");
        let t = Instant::now();
        let odb = repo.odb().unwrap();
        let mp = odb.add_new_mempack_backend(1000).unwrap();
        for p in &v {
            let b = std::fs::read(wt.join(p)).unwrap();
            odb.write(ObjectType::Blob, &b).unwrap();
        }
        let t1 = t.elapsed().as_secs_f64() * 1e3;
        let mut buf = git2::Buf::new();
        mp.dump(&repo, &mut buf).unwrap();
        let t2 = t.elapsed().as_secs_f64() * 1e3;
        let mut w = odb.packwriter().unwrap();
        use std::io::Write;
        w.write_all(&buf).unwrap();
        w.commit().unwrap();
        let t3 = t.elapsed().as_secs_f64() * 1e3;
        mp.reset().unwrap();
        eprintln!(
            "{round} mempack write {t1:.1} dump {t2:.1} packwriter {t3:.1} ms ({} bytes)",
            buf.len()
        );
        let v = files("pb");
        let t = Instant::now();
        let mp = odb.add_new_mempack_backend(1000).unwrap();
        let mut ids = Vec::new();
        for p in &v {
            let b = std::fs::read(wt.join(p)).unwrap();
            ids.push(odb.write(ObjectType::Blob, &b).unwrap());
        }
        let t1 = t.elapsed().as_secs_f64() * 1e3;
        let mut pb = repo.packbuilder().unwrap();
        pb.set_threads(1);
        for id in &ids {
            pb.insert_object(*id, None).unwrap();
        }
        let mut buf = git2::Buf::new();
        pb.write_buf(&mut buf).unwrap();
        let t2 = t.elapsed().as_secs_f64() * 1e3;
        let mut w = odb.packwriter().unwrap();
        w.write_all(&buf).unwrap();
        w.commit().unwrap();
        let t3 = t.elapsed().as_secs_f64() * 1e3;
        mp.reset().unwrap();
        eprintln!(
            "{round} pb write {t1:.1} build {t2:.1} packwriter {t3:.1} ms ({} bytes)",
            buf.len()
        );
        let t = Instant::now();
        for id in &ids {
            assert!(repo.find_blob(*id).is_ok());
        }
        eprintln!("{round} verify {:.1}", t.elapsed().as_secs_f64() * 1e3);
    }
}
