namespace MuxWatch.Sources;

/// <summary>Something the probe loop samples once per cycle: the thread pool, each watched multiplexer.</summary>
/// <remarks>
/// <see cref="Sample"/> runs on the loop's own thread and must not block: read local state, start any
/// network call (a PING) without waiting for it, and let its completion record the result. So a slow or
/// dead endpoint delays no other, and a cycle never waits on the network.
/// </remarks>
public interface IPeriodicProbe
{
    /// <summary>A short fixed name, used as a metric label (<c>threadpool</c>, <c>multiplexer</c>).</summary>
    string Name { get; }

    /// <summary>Takes one sample at <paramref name="now"/>.</summary>
    void Sample(DateTimeOffset now, CancellationToken stopping);
}
