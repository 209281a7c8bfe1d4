using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using MuxWatch.Export;
using MuxWatch.Hosting;
using MuxWatch.Pipeline;
using MuxWatch.Probing;

namespace MuxWatch.StackExchangeRedis;

/// <summary>
/// Every watched multiplexer, sampled by the probe loop each cycle, and reported to <c>/api/targets</c>.
/// </summary>
internal sealed class MultiplexerProbe : IPeriodicProbe, ITargetStatusSource, IAsyncDisposable
{
    private readonly WatchedMultiplexer[] _watched;
    private readonly IOptions<MuxWatchOptions> _options;

    public MultiplexerProbe(
        IEnumerable<MultiplexerRegistration> registrations,
        IEnumerable<ConfiguredTargets> configured,
        IServiceProvider services,
        MuxWatchMetrics metrics,
        TimeProvider time,
        IOptions<MuxWatchOptions> options)
    {
        _options = options;
        var all = registrations.Concat(configured.SelectMany(targets => targets.Registrations())).ToList();
        var duplicate = all.GroupBy(r => r.Name, StringComparer.OrdinalIgnoreCase).FirstOrDefault(g => g.Count() > 1);
        if (duplicate is not null)
        {
            throw new OptionsValidationException(nameof(MuxWatchOptions), typeof(MuxWatchOptions),
                [$"Two multiplexers are named '{duplicate.Key}' (AddMultiplexer and {ConfiguredTargets.SectionName}): names must be unique."]);
        }

        // Resolved when first needed: the pipeline's live-counters step reads this probe, so taking the
        // pipeline in the constructor would make the two depend on each other.
        TimeoutPipeline Pipeline() => services.GetRequiredService<TimeoutPipeline>();
        _watched = [.. all.Select(r => new WatchedMultiplexer(r, services, metrics, Pipeline, time))];
    }

    public string Name => "multiplexer";

    internal IReadOnlyList<WatchedMultiplexer> Watched => _watched;

    public void Sample(DateTimeOffset now, CancellationToken stopping)
    {
        var settings = _options.Value;
        List<Exception>? failures = null;
        foreach (var watched in _watched)
        {
            try
            {
                watched.Sample(now, settings.Ping, settings.ProbeTimeout, stopping);
            }
#pragma warning disable CA1031 // one multiplexer that fails to sample must not keep the others from theirs
            catch (Exception ex)
#pragma warning restore CA1031
            {
                (failures ??= []).Add(ex);
            }
        }

        if (failures is not null)
        {
            throw new AggregateException("sampling a watched multiplexer failed", failures);
        }
    }

    public IReadOnlyList<TargetStatus> Targets() => [.. _watched.Select(w => w.Status())];

    public async ValueTask DisposeAsync()
    {
        foreach (var watched in _watched)
        {
            await watched.DisposeAsync().ConfigureAwait(false);
        }
    }
}
