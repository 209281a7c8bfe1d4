namespace MuxWatch.Model;

/// <summary>
/// An endpoint's interactive-connection counters read from the live multiplexer when a timeout is
/// caught in-process. They matter because the message can be wrong: 3.4.35 writes <c>qs: 0</c> while
/// its counters show every reply still outstanding (measured in this project).
/// </summary>
/// <param name="Endpoint">The endpoint, <c>host:port</c>.</param>
/// <param name="Connected">Whether the interactive connection was up.</param>
/// <param name="SentAwaitingResponse">Written, awaiting a reply (<c>qs</c>).</param>
/// <param name="PendingUnsent">Queued, not yet written (<c>qu</c>).</param>
/// <param name="SampledAt">When they were read.</param>
public sealed record LiveCounters(string Endpoint, bool Connected, long SentAwaitingResponse, long PendingUnsent, DateTimeOffset SampledAt)
{
    /// <summary>
    /// The last time MuxWatch's probe found the interactive connection up at or before the failure was caught (not when
    /// these were read, which a starved pool can delay past the connection's re-making); null when it never did.
    /// A connection seen up after a silence of the server ended survived it: its later loss is no consequence of it.
    /// </summary>
    public DateTimeOffset? LastSeenConnected { get; init; }
}
