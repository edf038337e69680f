//! Build script: gives the executables the RPATH of the Fast DDS that rosbag2_rs_transport links
//! (feature `fastdds`) when it is outside the system's library directories.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_ROSBAG2_RS_FASTDDS_RPATH");
    if let Ok(lib) = std::env::var("DEP_ROSBAG2_RS_FASTDDS_RPATH") {
        println!("cargo:rustc-link-arg=-Wl,--disable-new-dtags,-rpath,{lib}");
    }
}
