import type { CheckSpec } from "../bindings/CheckSpec";
import type { RepoChecks } from "../bindings/RepoChecks";
import { call } from "./journal";

/** The checks a new task in `repo` would run: configured in a file, or discovered from its files. */
export function checksForRepo(repo: string): Promise<RepoChecks> {
  return call("checks_for_repo", { repo });
}

/** Writes `checks` as the repository's `[[checks]]` (`.bosun/config.toml`); resolves with the path written. */
export function saveChecks(repo: string, checks: CheckSpec[]): Promise<string> {
  return call("save_checks", { repo, checks });
}
