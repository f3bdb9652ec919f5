import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { pageSessionActor, type HumanActor } from "./actor";

/** For pages: the signed-in human, or a redirect to the sign-in page. */
export async function requireHumanSession(): Promise<HumanActor> {
  const actor = await pageSessionActor(new Headers(await headers()));
  if (!actor) redirect("/sign-in");
  return actor;
}

export async function findHumanSession(): Promise<HumanActor | null> {
  return pageSessionActor(new Headers(await headers()));
}
