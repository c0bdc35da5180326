// When a gate job has ended. The spec names two statuses and leaves the rest unshown: "a job can be terminal,
// queued or running" (§2). So QUEUED and RUNNING are the only statuses that are not an end: a status this gds
// does not know (a service's TIMED_OUT) ends a wait and is said, rather than polled for ever.

export function jobEnded(status: string): boolean {
  return status !== 'QUEUED' && status !== 'RUNNING';
}
