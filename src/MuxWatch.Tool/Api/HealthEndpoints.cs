using Microsoft.Extensions.Diagnostics.HealthChecks;
using MuxWatch.Sources;

namespace MuxWatch.Tool.Api;

/// <summary><c>/healthz</c>: alive when the process serves and the probe loop is cycling; 503 when the loop has stalled.</summary>
internal static class HealthEndpoints
{
    public static IServiceCollection AddHealth(this IServiceCollection services)
    {
        services.AddHealthChecks().AddCheck<ProbeLoopHealthCheck>("probe-loop");
        return services;
    }

    public static IEndpointRouteBuilder MapHealth(this IEndpointRouteBuilder endpoints)
    {
        endpoints.MapHealthChecks("/healthz");
        return endpoints;
    }

    private sealed class ProbeLoopHealthCheck(ProbeLoopHealth loop) : IHealthCheck
    {
        public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default) =>
            Task.FromResult(loop.IsCycling(out var description) ? HealthCheckResult.Healthy(description) : HealthCheckResult.Unhealthy(description));
    }
}
