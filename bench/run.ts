// npm run bench: every benchmark, each printing its figure beside the baseline measured in the same run.
for (const script of ["ingest.ts", "query.ts"]) {
  console.log(`\n== bench/${script}`);
  const p = Bun.spawnSync([process.execPath, `${import.meta.dir}/${script}`], { stdout: "inherit", stderr: "inherit", env: process.env });
  if (p.exitCode !== 0) process.exit(p.exitCode ?? 1);
}
