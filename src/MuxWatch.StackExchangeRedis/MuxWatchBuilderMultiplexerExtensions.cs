using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Options;
using MuxWatch.Hosting;
using MuxWatch.Pipeline;
using MuxWatch.Sources;
using MuxWatch.StackExchangeRedis;
using StackExchange.Redis;

#pragma warning disable IDE0130 // the entry point lives where IServiceCollection's extensions are found
namespace Microsoft.Extensions.DependencyInjection;
#pragma warning restore IDE0130

/// <summary>Watches StackExchange.Redis multiplexers: <c>services.AddMuxWatch().AddMultiplexer(...)</c>.</summary>
public static class MuxWatchBuilderMultiplexerExtensions
{
    /// <summary>
    /// Watches the app's own multiplexer, resolved lazily on the probe loop's first cycle (off its thread),
    /// for example <c>AddMultiplexer("cache", sp =&gt; sp.GetRequiredService&lt;IConnectionMultiplexer&gt;())</c>.
    /// </summary>
    /// <remarks>
    /// The multiplexer is observed, never reconfigured or disposed, and its profiler slot is left alone.
    /// A factory that throws (Redis down at start) never breaks start-up: the multiplexer is reported
    /// <c>failed</c> in <c>/api/targets</c> and tried again every 10 s. Once the app disposes of it, it
    /// stops being probed and its series are removed.
    /// </remarks>
    /// <param name="builder">From <c>AddMuxWatch()</c>.</param>
    /// <param name="name">The <c>multiplexer</c> label: 1 to 64 letters, digits, '.', '_' or '-'.</param>
    /// <param name="multiplexer">Gets the app's multiplexer.</param>
    public static MuxWatchBuilder AddMultiplexer(this MuxWatchBuilder builder, string name, Func<IServiceProvider, IConnectionMultiplexer> multiplexer)
    {
        ArgumentNullException.ThrowIfNull(multiplexer);
        return Add(builder, name, new MultiplexerRegistration(name, sp => Task.FromResult(multiplexer(sp)), Owned: false, DisplayConfiguration: null));
    }

    /// <summary>
    /// Watches a multiplexer that MuxWatch creates from <paramref name="connectionString"/> and owns
    /// (connects in the background with <c>abortConnect=false</c>; disposes of it when the host stops).
    /// </summary>
    /// <exception cref="ArgumentException">The connection string cannot be parsed (the message never shows the password).</exception>
    public static MuxWatchBuilder AddMultiplexer(this MuxWatchBuilder builder, string name, string connectionString)
    {
        ArgumentNullException.ThrowIfNull(connectionString);
        MultiplexerRegistration registration;
        try
        {
            registration = MultiplexerRegistration.ForConnectionString(name, connectionString);
        }
        catch (ArgumentException ex)
        {
            throw new ArgumentException($"The connection string of multiplexer '{name}' is not valid: {ex.Message}", nameof(connectionString), ex);
        }

        return Add(builder, name, registration);
    }

    /// <summary>
    /// Watches every target of <c>MuxWatch:Targets</c> (a list of <c>{ Name, ConnectionString }</c>;
    /// <c>localhost:6379</c> as <c>local</c> when none are configured), with connections MuxWatch owns.
    /// Invalid targets stop start-up naming the setting.
    /// </summary>
    public static MuxWatchBuilder AddTargetsFromConfiguration(this MuxWatchBuilder builder)
    {
        ArgumentNullException.ThrowIfNull(builder);
        builder.Services.AddOptions<TargetsOptions>().BindConfiguration("MuxWatch").ValidateOnStart();
        builder.Services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<TargetsOptions>, TargetsOptionsValidator>());
        builder.Services.TryAddSingleton<ConfiguredTargets>();
        builder.Services.TryAddSingleton<ProbeCycleRequests>(); // multiplexers of MuxWatch's own: a silence asks for their PING at once
        AddProbe(builder.Services);
        return builder;
    }

    /// <summary>
    /// Measures the pub/sub delivery lag of the watched multiplexer <paramref name="name"/> (added before
    /// with <c>AddMultiplexer</c>): every probe cycle MuxWatch publishes a small stamped message through it
    /// on a channel of its own and subscribes to that channel through it, and exports how late each
    /// arrives (<c>muxwatch_pubsub_*</c>) and the subscription connection's counters
    /// (<c>muxwatch_subscription_*</c>). Opt-in because it publishes: one PUBLISH a cycle, at most 64
    /// outstanding, on a channel no one else uses.
    /// </summary>
    /// <exception cref="ArgumentException">No multiplexer named <paramref name="name"/> was added.</exception>
    public static MuxWatchBuilder MeasurePubSubLag(this MuxWatchBuilder builder, string name)
    {
        ArgumentNullException.ThrowIfNull(builder);
        var descriptor = builder.Services.FirstOrDefault(d => d.ServiceType == typeof(MultiplexerRegistration)
            && d.ImplementationInstance is MultiplexerRegistration registration
            && string.Equals(registration.Name, name, StringComparison.OrdinalIgnoreCase))
            ?? throw new ArgumentException($"MeasurePubSubLag: no multiplexer named '{name}' was added; call AddMultiplexer(\"{name}\", ...) first.", nameof(name));
        builder.Services.Remove(descriptor);
        var registration = (MultiplexerRegistration)descriptor.ImplementationInstance!;
        builder.Services.AddSingleton(registration with { MeasurePubSubLag = true, Resolve = registration.ResolveSubscribing ?? registration.Resolve });
        return builder;
    }

    private static MuxWatchBuilder Add(MuxWatchBuilder builder, string name, MultiplexerRegistration registration)
    {
        ArgumentNullException.ThrowIfNull(builder);
        if (name is null || !Names.IsValid(name))
        {
            throw new ArgumentException($"A multiplexer name must be 1 to 64 letters, digits, '.', '_' or '-' (was '{name}').", nameof(name));
        }

        if (builder.Services.Any(d => d.ServiceType == typeof(MultiplexerRegistration)
                && d.ImplementationInstance is MultiplexerRegistration other
                && string.Equals(other.Name, name, StringComparison.OrdinalIgnoreCase)))
        {
            throw new ArgumentException($"A multiplexer named '{name}' is already watched: names must be unique.", nameof(name));
        }

        builder.Services.AddSingleton(registration);
        if (registration.Owned)
        {
            builder.Services.TryAddSingleton<ProbeCycleRequests>(); // its own connection: a silence asks for its PING at once
        }

        AddProbe(builder.Services);
        return builder;
    }

    internal static void AddProbe(IServiceCollection services)
    {
        if (services.Any(d => d.ServiceType == typeof(WatchedMultiplexers)))
        {
            return;
        }

        services.AddSingleton<MultiplexerMetrics>();
        services.AddSingleton<WatchedMultiplexers>();
        services.AddSingleton<ITargetStatusSource>(sp => sp.GetRequiredService<WatchedMultiplexers>());
        services.AddSingleton<IPeriodicProbe, MultiplexerProbe>();
        services.AddSingleton<ITimeoutStep, LiveCountersStep>();
        services.AddSingleton<ServerPollProbe>();
        services.AddSingleton<IPeriodicProbe>(sp => sp.GetRequiredService<ServerPollProbe>());
    }
}
