using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.Export;
using MuxWatch.Model;
using MuxWatch.Sources;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Every watched multiplexer (those added with <c>AddMultiplexer</c> and the configured targets): the
/// one list that the probe samples, the live-counters step and the server poller read, and
/// <c>/api/targets</c> reports. It depends on nothing downstream, so nothing has to be fetched lazily.
/// </summary>
internal sealed class WatchedMultiplexers : ITargetStatusSource, IAsyncDisposable
{
    private readonly WatchedMultiplexer[] _all;

    public WatchedMultiplexers(
        IEnumerable<MultiplexerRegistration> registrations,
        IEnumerable<ConfiguredTargets> configured,
        IServiceProvider services,
        MuxWatchMetrics metrics,
        TimeProvider time,
        IOptions<MuxWatchOptions> options)
    {
        var all = registrations.Concat(configured.SelectMany(targets => targets.Registrations())).ToList();
        var duplicate = all.GroupBy(r => r.Name, StringComparer.OrdinalIgnoreCase).FirstOrDefault(g => g.Count() > 1);
        if (duplicate is not null)
        {
            throw new OptionsValidationException(nameof(MuxWatchOptions), typeof(MuxWatchOptions),
                [$"Two multiplexers are named '{duplicate.Key}' (AddMultiplexer and {ConfiguredTargets.SectionName}): names must be unique."]);
        }

        _all = [.. all.Select(r => new WatchedMultiplexer(r, services, metrics, time, options.Value.MaxEndpointsPerMultiplexer))];
    }

    /// <summary>Every watched multiplexer, in registration order.</summary>
    public IReadOnlyList<WatchedMultiplexer> All => _all;

    public IReadOnlyList<TargetStatus> Targets() => [.. _all.Select(w => w.Status())];

    public async ValueTask DisposeAsync()
    {
        foreach (var watched in _all)
        {
            await watched.DisposeAsync().ConfigureAwait(false);
        }
    }
}
