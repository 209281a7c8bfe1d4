using System.Runtime.CompilerServices;
using StackExchange.Redis;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// A multiplexer's timeout as its requests meet it: the smaller of its <c>syncTimeout</c> and <c>asyncTimeout</c>
/// (the latter defaults to the former). Read once per multiplexer from its configuration and kept beside it: the
/// server poller asks every cycle, and a multiplexer's timeouts do not change once it is made.
/// </summary>
internal static class ClientTimeouts
{
    private static readonly ConditionalWeakTable<IConnectionMultiplexer, StrongBox<TimeSpan?>> Known = [];

    public static TimeSpan? Of(IConnectionMultiplexer multiplexer) => Known.GetValue(multiplexer, static m => new StrongBox<TimeSpan?>(Read(m))).Value;

    private static TimeSpan? Read(IConnectionMultiplexer multiplexer)
    {
        try
        {
            var options = ConfigurationOptions.Parse(multiplexer.Configuration);
            var smallest = Math.Min(options.SyncTimeout, options.AsyncTimeout);
            return smallest > 0 ? TimeSpan.FromMilliseconds(smallest) : null;
        }
        catch (Exception ex) when (ex is ArgumentException or ObjectDisposedException)
        {
            return null;
        }
    }
}
