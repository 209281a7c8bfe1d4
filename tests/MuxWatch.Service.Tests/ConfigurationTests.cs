using MuxWatch.Testing;

namespace MuxWatch.Service.Tests;

/// <summary>Invalid settings stop the service at start-up with a message naming the setting.</summary>
public sealed class ConfigurationTests
{
    [Theory]
    [InlineData("MuxWatch:RecentTimeoutCapacity", "0")]
    [InlineData("MuxWatch:CaptureQueueCapacity", "-1")]
    [InlineData("MuxWatch:Api:MaxBodyBytes", "10")]
    [InlineData("MuxWatch:Api:MaxMessagesPerRequest", "0")]
    [InlineData("MuxWatch:Api:MaxConcurrentPosts", "0")]
    [InlineData("MuxWatch:Api:BearerToken", "short")]
    [InlineData("MuxWatch:ProbeInterval", "00:00:00")]
    [InlineData("MuxWatch:ProbeInterval", "-00:00:01")]
    [InlineData("MuxWatch:ProbeTimeout", "00:00:00")]
    [InlineData("MuxWatch:ServerPollInterval", "00:00:00")]
    [InlineData("MuxWatch:ServerPollTimeout", "00:10:00")]
    [InlineData("MuxWatch:ServerTimelineRetention", "00:00:01")]
    [InlineData("MuxWatch:CorrelationSettleTimeout", "-00:00:01")]
    [InlineData("MuxWatch:Targets:0:ConnectionString", "localhost:6379,password=hunter2-never-shown,notAnOption=1")]
    [InlineData("MuxWatch:Targets:0:ConnectionString", ",,,")]
    [InlineData("MuxWatch:Targets:0:Name", "has spaces and {braces}")]
    public async Task An_invalid_setting_exits_non_zero_naming_it(string setting, string value)
    {
        var port = FreePort.Next();
        var info = BuiltProgram.StartInfo("MuxWatch.Service", "--urls", $"http://127.0.0.1:{port}", $"--{setting}={value}");

        var (exitCode, output, error) = await BuiltProgram.RunAsync(info);

        Assert.NotEqual(0, exitCode);
        Assert.Contains(setting, output + error, StringComparison.Ordinal);
        if (setting.EndsWith("BearerToken", StringComparison.Ordinal))
        {
            Assert.DoesNotContain($"={value}", output + error, StringComparison.Ordinal);
        }

        Assert.DoesNotContain("hunter2-never-shown", output + error, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Two_targets_with_one_name_exit_non_zero_naming_the_setting()
    {
        var info = BuiltProgram.StartInfo("MuxWatch.Service", "--urls", $"http://127.0.0.1:{FreePort.Next()}",
            "--MuxWatch:Targets:0:Name=cache", "--MuxWatch:Targets:0:ConnectionString=localhost:6379",
            "--MuxWatch:Targets:1:Name=Cache", "--MuxWatch:Targets:1:ConnectionString=localhost:6380");

        var (exitCode, output, error) = await BuiltProgram.RunAsync(info);

        Assert.NotEqual(0, exitCode);
        Assert.Contains("MuxWatch:Targets:1:Name", output + error, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_setting_that_is_not_a_number_exits_non_zero_naming_it()
    {
        var info = BuiltProgram.StartInfo("MuxWatch.Service", "--urls", $"http://127.0.0.1:{FreePort.Next()}", "--MuxWatch:RecentTimeoutCapacity=lots");

        var (exitCode, output, error) = await BuiltProgram.RunAsync(info);

        Assert.NotEqual(0, exitCode);
        Assert.Contains("RecentTimeoutCapacity", output + error, StringComparison.Ordinal);
    }
}
