using System.Net;
using StackExchange.Redis;
using StackExchange.Redis.Configuration;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// The client's plain defaults, unchanged (nothing but the two members below is overridden), for every endpoint
/// no other provider claims; tells <see cref="MultiplexerDiscovery"/> of each multiplexer connected with them.
/// </summary>
internal sealed class DiscoveringOptionsProvider : DefaultOptionsProvider
{
    public override bool IsMatch(EndPoint endpoint) => MultiplexerDiscovery.Claims(endpoint, typeof(DefaultOptionsProvider));

    public override Task AfterConnectAsync(ConnectionMultiplexer multiplexer, Action<string> log)
    {
        MultiplexerDiscovery.Connected(multiplexer);
        return base.AfterConnectAsync(multiplexer, log);
    }
}
