using System.Net;
using StackExchange.Redis;
using StackExchange.Redis.Configuration;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// The client's Azure Cache for Redis defaults, inherited whole (in whatever client version the app runs: its
/// defaults, its SSL on 6380, its maintenance-event listener after connect), for the endpoints the client's own
/// <see cref="AzureOptionsProvider"/> would take; tells <see cref="MultiplexerDiscovery"/> of each multiplexer
/// connected with them.
/// </summary>
internal sealed class DiscoveringAzureOptionsProvider : AzureOptionsProvider
{
    public override bool IsMatch(EndPoint endpoint) =>
        base.IsMatch(endpoint) && MultiplexerDiscovery.Claims(endpoint, typeof(AzureOptionsProvider));

    public override Task AfterConnectAsync(ConnectionMultiplexer muxer, Action<string> log)
    {
        MultiplexerDiscovery.Connected(muxer);
        return base.AfterConnectAsync(muxer, log);
    }
}
