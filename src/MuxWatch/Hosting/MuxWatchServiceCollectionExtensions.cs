using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using MuxWatch.Configuration;
using MuxWatch.Export;
using MuxWatch.Fleet;
using MuxWatch.Hosting;
using MuxWatch.Pipeline;
using MuxWatch.Sinks;
using MuxWatch.Sources;
using MuxWatch.State;
using MuxWatch.Tracking;
using Prometheus;

#pragma warning disable IDE0130 // the entry point lives where IServiceCollection's extensions are found
namespace Microsoft.Extensions.DependencyInjection;
#pragma warning restore IDE0130

/// <summary>Adds MuxWatch to an app or host.</summary>
public static class MuxWatchServiceCollectionExtensions
{
    /// <summary>
    /// Adds MuxWatch: every StackExchange.Redis timeout thrown in the process is caught, read and
    /// diagnosed; the recent ones are kept in <see cref="RecentTimeouts"/>, counted in
    /// <c>muxwatch_timeouts_total</c> and logged; the thread pool is sampled every
    /// <see cref="MuxWatchOptions.ProbeInterval"/>. Chain <c>AddMultiplexer(...)</c> (MuxWatch.StackExchangeRedis)
    /// to probe multiplexers.
    /// </summary>
    /// <remarks>
    /// Settings come from the <c>MuxWatch</c> configuration section and are validated when the host
    /// starts, so a bad value stops start-up with a message naming it. Metrics go to prometheus-net's
    /// default registry unless <see cref="MuxWatchBuilder.UseMetricsRegistry"/> names another, and through the
    /// <c>MuxWatch</c> meter (<see cref="MuxWatchOptions.Meter"/>).
    /// </remarks>
    public static MuxWatchBuilder AddMuxWatch(this IServiceCollection services, Action<MuxWatchOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        var options = services.AddOptions<MuxWatchOptions>().BindConfiguration(MuxWatchOptions.SectionName).ValidateOnStart();
        if (configure is not null)
        {
            options.Configure(configure);
        }

        var builder = new MuxWatchBuilder(services);
        if (services.Any(descriptor => descriptor.ServiceType == typeof(TimeoutPipeline)))
        {
            return builder; // added before: the options above are the only addition
        }

        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<MuxWatchOptions>, MuxWatchOptionsValidator>());
        services.TryAddSingleton(TimeProvider.System);
        services.TryAddSingleton(_ => new MuxWatchMetrics(Metrics.DefaultRegistry));

        // The meter, as the framework's own are made: through IMeterFactory (a generic host has one; AddMetrics
        // adds it elsewhere and changes nothing where it is), its instruments free until something listens.
        services.AddMetrics();
        services.TryAddSingleton(sp => new MuxWatchMeter(sp.GetRequiredService<IMeterFactory>(), sp.GetRequiredService<MuxWatchMetrics>()));
        services.AddHostedService(sp => new MeterPublication(sp.GetRequiredService<IOptions<MuxWatchOptions>>().Value.Meter ? sp.GetRequiredService<MuxWatchMeter>() : null));

        // The pipeline: steps in DI order within a stage, sinks in DI order.
        // Factories: the pipeline's and the sinks' constructors are the core's own (internal), which the container's activator does not use.
        services.AddSingleton(sp => new TimeoutPipeline(
            sp.GetServices<ITimeoutStep>(), sp.GetServices<ITimeoutSink>(), sp.GetService<ILogger<TimeoutPipeline>>(),
            sp.GetRequiredService<ServerPollRequests>(), sp.GetRequiredService<TimeProvider>(), sp.GetRequiredService<IOptions<MuxWatchOptions>>()));
        // The one way back from the pipeline to the sources: it asks the server pollers for a poll (a key's size), they say when they polled.
        services.AddSingleton(sp => new ServerPollRequests(sp.GetRequiredService<ServerTimelines>()));
        services.AddSingleton<IServerPollRequests>(sp => sp.GetRequiredService<ServerPollRequests>());
        services.AddSingleton<ThreadPoolHistory>();
        services.AddSingleton<ITimeoutStep, ThreadPoolBeforeWaitStep>();
        services.AddSingleton<RuntimeHistory>();
        services.AddSingleton(_ => new ProcessActivity()); // noted by the witness and the probe loop, read by the server pollers
        services.AddSingleton(sp =>
        {
            var options = sp.GetRequiredService<IOptions<MuxWatchOptions>>().Value;
            return new PoolStackCaptures(options.PoolStackCaptureInterval, PoolStackCapturer.WhyNever(options));
        });
        services.AddSingleton<PoolStackCapturer>();
        services.AddSingleton<ThreadPoolEvents>();
        services.AddHostedService(sp => sp.GetRequiredService<ThreadPoolEvents>()); // the pool probe turns it on and off
        services.AddSingleton<ITimeoutStep, RuntimeOverWaitStep>();
        services.AddSingleton<ITimeoutStep, MessageRulesStep>();
        services.AddSingleton(sp => new ServerTimelines(sp.GetRequiredService<IOptions<MuxWatchOptions>>()));
        services.AddSingleton(sp => new ServerPolls(sp.GetRequiredService<MuxWatchMetrics>()));
        services.AddSingleton<ITimeoutStep, ServerCorrelationStep>();
        services.AddSingleton<ITimeoutStep, RuntimeReasonStep>(); // the correlating steps run in TimeoutPipeline.CorrelatingOrder
        services.AddSingleton<ITimeoutStep, PoolStacksStep>();
        services.AddSingleton<ITimeoutStep, HugeKeyStep>();
        services.AddSingleton(sp => new RecentTimeouts(sp.GetRequiredService<IOptions<MuxWatchOptions>>().Value.RecentTimeoutCapacity));
        services.AddSingleton<TimeoutCounts>();
        services.AddSingleton<TimeoutLogWriter>();
        services.AddSingleton<ITimeoutSink>(sp => sp.GetRequiredService<RecentTimeouts>());
        services.AddSingleton(sp => new RecentIncidents(sp.GetRequiredService<TimeProvider>()));
        services.AddSingleton<ITimeoutSink>(sp => sp.GetRequiredService<RecentIncidents>());
        services.AddSingleton<ITimeoutSink>(sp => sp.GetRequiredService<TimeoutCounts>());
        services.AddSingleton<ITimeoutSink, TimeoutMetricsSink>();
        services.AddSingleton<ITimeoutSink>(sp => sp.GetRequiredService<TimeoutLogWriter>());

        // Sources: the first-chance catcher, and the probe loop's periodic probes.
        services.AddSingleton(sp => new FirstChanceRedisErrorCatcher(
            sp.GetRequiredService<TimeProvider>(),
            sp.GetRequiredService<IOptions<MuxWatchOptions>>().Value.CaptureQueueCapacity));
        services.AddHostedService<TimeoutCaptureService>();
        services.AddSingleton(sp => new ProbeLoopHealth(sp.GetRequiredService<TimeProvider>(), sp.GetRequiredService<IOptions<MuxWatchOptions>>()));
        services.AddSingleton(sp => new MuxWatchStatus(
            sp.GetRequiredService<TimeoutCounts>(),
            sp.GetRequiredService<RecentTimeouts>(),
            sp.GetRequiredService<FirstChanceRedisErrorCatcher>(),
            sp.GetRequiredService<ProbeLoopHealth>(),
            sp.GetRequiredService<TimeoutPipeline>(),
            sp.GetServices<IMuxWatchStatusSection>(),
            sp.GetRequiredService<PoolStackCaptures>()));
        services.AddSingleton<IPeriodicProbe, ThreadPoolProbe>();
        services.AddSingleton<IPeriodicProbe, CaptureQueueProbe>();
        services.AddSingleton<IPeriodicProbe, OverdueTimeoutSettler>();
        services.AddSingleton<IPeriodicProbe, FleetWitness>(); // idle unless MuxWatch:FleetPrometheusUrl is set
        services.AddHostedService<ProbeLoop>();
        services.AddSingleton<WitnessThread>();
        services.AddHostedService(sp => sp.GetRequiredService<WitnessThread>());
        AddProbePackages(builder);
        return builder;
    }

    /// <summary>
    /// The probe package MuxWatch.StackExchangeRedis, when the app has it: it watches every multiplexer
    /// the process connects (<see cref="MuxWatchOptions.DiscoverMultiplexers"/>). Found by name because an
    /// app that calls only <c>AddMuxWatch()</c> never uses one of its types, so the runtime would not load
    /// it; a literal type name keeps the lookup visible to trimming and Native AOT.
    /// </summary>
    private static void AddProbePackages(MuxWatchBuilder builder)
    {
        var package = Type.GetType("MuxWatch.StackExchangeRedis.StackExchangeRedisProbePackage, MuxWatch.StackExchangeRedis", throwOnError: false);
        if (package is not null && Activator.CreateInstance(package) is IMuxWatchProbePackage probes)
        {
            probes.AddTo(builder);
        }
    }
}
