
namespace MuxWatch.Model;

/// <summary>Why a timeout happened: a fixed vocabulary, so it can label a metric.</summary>
/// <remarks>
/// <see cref="SlowCommand"/> and <see cref="Persistence"/> refine <see cref="ServerStall"/> once the
/// server's own timeline is correlated; the message alone can only say that the server did not answer.
/// </remarks>
public enum TimeoutCause
{
    /// <summary>Nothing in the evidence decides it.</summary>
    Unknown,

    /// <summary>Worker or I/O threads busy above the pool's minimum: work waited for a thread.</summary>
    ThreadPoolStarvation,

    /// <summary>The reply had arrived (<c>in</c>/<c>in-pipe</c> above 0) but the client had not read it.</summary>
    ClientInputBacklog,

    /// <summary>A large request or reply ahead of this one, or the bandwidth to move it.</summary>
    LargePayload,

    /// <summary>Commands queued behind the single writer or in the backlog, not yet written.</summary>
    WriteBacklog,

    /// <summary>Requests sent and unanswered, nothing inbound, a healthy pool: the server or network did not answer.</summary>
    ServerStall,

    /// <summary>No connection: the command could not be sent or its connection failed.</summary>
    ConnectionLoss,

    /// <summary>A slow command ran on the server while the request waited (server correlation).</summary>
    SlowCommand,

    /// <summary>A fork, BGSAVE or AOF rewrite ran on the server while the request waited (server correlation).</summary>
    Persistence,

    /// <summary>
    /// The client was short of CPU: the machine's (<c>Local-CPU</c> near 100%) or, in-process, this process's
    /// (its CPU time near the cores it has, or a dedicated thread of MuxWatch's woken late): nothing of the client ran on time.
    /// </summary>
    ClientCpu,

    /// <summary>
    /// The request waited while its node failed over: a replica was promoted in place of its primary (a
    /// role change on the timeline, server correlation); connection failures and timeouts are its consequence.
    /// </summary>
    Failover,

    /// <summary>
    /// Blocking garbage collections in this process paused every thread for a large share of the wait
    /// (<c>GC.GetTotalPauseDuration</c> over it, in-process only): the server answered, the app could not read.
    /// </summary>
    GcPause,

    /// <summary>
    /// The client version that wrote the message has a defect its maintainers fixed in a later release, and
    /// the message shows its symptom (a command neither queued nor sent on a version with a write-lock stall):
    /// the answer is to upgrade (<c>ClientDefects</c> lists them, with their sources).
    /// </summary>
    ClientDefect,
}
