using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>One service process shared by a test class (where the process and its sockets are the point), with small limits so oversize cases stay cheap.</summary>
public sealed class ServiceFixture : IAsyncLifetime
{
    public const int MaxBodyBytes = 64 * 1024;
    public const int MaxMessagesPerRequest = 50;

    public ServiceProcess Service { get; private set; } = null!;

    public async Task InitializeAsync() =>
        Service = await ServiceProcess.StartAsync(
            $"--MuxWatch:Api:MaxBodyBytes={MaxBodyBytes}",
            $"--MuxWatch:Api:MaxMessagesPerRequest={MaxMessagesPerRequest}");

    public async Task DisposeAsync() => await Service.DisposeAsync();
}
