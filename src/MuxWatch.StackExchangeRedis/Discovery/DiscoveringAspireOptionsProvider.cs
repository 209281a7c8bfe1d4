using System.Net;
using StackExchange.Redis;
using StackExchange.Redis.Configuration;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Aspire's defaults, for the configurations Aspire's <c>AddRedisClient</c> makes (verified on Aspire 13): Aspire
/// replaces the client's provider with one of its own, whose only change is <c>AbortOnConnectFail = false</c>, but
/// only when the provider the client picked is exactly <see cref="DefaultOptionsProvider"/>; MuxWatch's plain
/// stand-in would make it keep the client's <c>true</c>, and an app whose Redis is down at start would then fail
/// where it retried before. So the configuration Aspire is making gets this provider instead: the same defaults
/// Aspire's would give, and its multiplexer discovered. An Aspire of another major version is left alone (its
/// multiplexer is then not discovered; <c>AddMultiplexer</c> names it).
/// </summary>
internal sealed class DiscoveringAspireOptionsProvider : DefaultOptionsProvider
{
    /// <summary>The Aspire major version whose defaults provider this replicates.</summary>
    private const int VerifiedAspireMajor = 13;

    public override bool AbortOnConnectFail => false;

    public override bool IsMatch(EndPoint endpoint) => MultiplexerDiscovery.Claims(endpoint, typeof(DefaultOptionsProvider), forAspire: true);

    public override Task AfterConnectAsync(ConnectionMultiplexer multiplexer, Action<string> log)
    {
        MultiplexerDiscovery.Connected(multiplexer);
        return base.AfterConnectAsync(multiplexer, log);
    }

    /// <summary>True when the code asking is Aspire's client integration, of the version this stands in for.</summary>
    internal static bool IsConfiguring(MultiplexerOrigin? origin) =>
        origin is { Label: "aspire", Version.Major: VerifiedAspireMajor };
}
