using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using MuxWatch.Hosting;
using MuxWatch.Timeouts;

#pragma warning disable IDE0130 // the entry point lives where IServiceCollection's extensions are found
namespace Microsoft.Extensions.DependencyInjection;
#pragma warning restore IDE0130

/// <summary>Adds MuxWatch to an app or host.</summary>
public static class MuxWatchServiceCollectionExtensions
{
    /// <summary>
    /// Adds MuxWatch: every StackExchange.Redis timeout thrown in the process is caught, read and
    /// diagnosed, and the recent ones are kept in <see cref="RecentTimeouts"/>.
    /// </summary>
    /// <remarks>
    /// Settings come from the <c>MuxWatch</c> configuration section and are validated when the host
    /// starts, so a bad value stops start-up with a message naming it.
    /// </remarks>
    public static MuxWatchBuilder AddMuxWatch(this IServiceCollection services, Action<MuxWatchOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        var options = services.AddOptions<MuxWatchOptions>().BindConfiguration(MuxWatchOptions.SectionName).ValidateOnStart();
        if (configure is not null)
        {
            options.Configure(configure);
        }

        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<MuxWatchOptions>, MuxWatchOptionsValidator>());
        services.TryAddSingleton(TimeProvider.System);
        services.TryAddSingleton(sp => new RecentTimeouts(sp.GetRequiredService<IOptions<MuxWatchOptions>>().Value.RecentTimeoutCapacity));
        services.TryAddSingleton<TimeoutRecorder>();
        services.TryAddSingleton<TimeoutLogWriter>();
        services.TryAddSingleton(sp => new FirstChanceTimeoutCatcher(
            sp.GetRequiredService<TimeProvider>(),
            sp.GetRequiredService<IOptions<MuxWatchOptions>>().Value.CaptureQueueCapacity));
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IHostedService, TimeoutCaptureService>());
        return new MuxWatchBuilder(services);
    }
}
