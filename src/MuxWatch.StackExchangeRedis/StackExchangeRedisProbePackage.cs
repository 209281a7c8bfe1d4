using Microsoft.Extensions.DependencyInjection;
using MuxWatch.Hosting;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// What this package adds to every <c>AddMuxWatch()</c> of an app that has it, found by the core by name
/// (<see cref="IMuxWatchProbePackage"/>): the multiplexer probe, and the discovery of every multiplexer the
/// process connects. The client's options providers are registered here, when the app's services are
/// configured, so that a library that connects while the host starts is not missed; a host whose
/// <c>MuxWatch:DiscoverMultiplexers</c> is off never listens to them.
/// </summary>
internal sealed class StackExchangeRedisProbePackage : IMuxWatchProbePackage
{
    public void AddTo(MuxWatchBuilder builder)
    {
        ArgumentNullException.ThrowIfNull(builder);
        MultiplexerDiscovery.Install();
        MuxWatchBuilderMultiplexerExtensions.AddProbe(builder.Services);
    }
}
