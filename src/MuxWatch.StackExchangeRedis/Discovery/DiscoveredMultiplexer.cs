using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>A multiplexer the process connected, held weakly (MuxWatch never keeps an app's multiplexer alive), and what made it.</summary>
internal sealed record DiscoveredMultiplexer(WeakReference<IConnectionMultiplexer> Reference, MultiplexerOrigin Origin)
{
    /// <summary>The multiplexer, unless it was collected or disposed.</summary>
    public IConnectionMultiplexer? Live =>
        Reference.TryGetTarget(out var multiplexer) && !MultiplexerInspection.IsDisposed(multiplexer) ? multiplexer : null;

    public bool IsAlive => Live is not null;
}
