import Link from "next/link";

export default function AgentNotFound() {
  return (
    <div className="rounded-xl border border-dashed border-slate-300 bg-white p-10 text-center">
      <h1 className="text-lg font-semibold">No such agent</h1>
      <p className="mt-1 text-sm text-slate-600">
        It may have been registered under another name.{" "}
        <Link href="/team" className="font-medium text-indigo-700 hover:underline">
          Back to the team
        </Link>
      </p>
    </div>
  );
}
